export { SETTLED_MARK, System, type SystemOptions, type Wiring } from "./system.js";
export { serviceModules } from "./services.js";
