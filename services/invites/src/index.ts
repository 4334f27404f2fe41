export { invitesService } from "./service.js";
