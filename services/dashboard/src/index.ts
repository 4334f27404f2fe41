export { dashboardService } from "./service.js";
