export { contactsService } from "./service.js";
