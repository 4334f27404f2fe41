export * from "./service.js";
