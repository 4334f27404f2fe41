export * from "./contract.js";
export * from "./common.js";
export * from "./errors.js";
export * from "./route.js";
export * from "./accounts.js";
