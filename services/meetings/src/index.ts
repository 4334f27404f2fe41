export { meetingsService } from "./service.js";
