export { accountsService } from "./service.js";
