export { System, type SystemOptions, type Wiring } from "./system.js";
export { serviceModules } from "./services.js";
