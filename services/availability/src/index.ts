export { availabilityService } from "./service.js";
