export * from "./ids.js";
export * from "./apiKeys.js";
