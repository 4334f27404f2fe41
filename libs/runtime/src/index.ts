export * from "./service.js";
export * from "./process.js";
export { commonConfigSchema, type CommonConfig } from "./commonConfig.js";
export { runService } from "./runService.js";
export { TrackedBus } from "./trackedBus.js";
