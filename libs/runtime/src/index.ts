export * from "./service.js";
export { commonConfigSchema, type CommonConfig } from "./commonConfig.js";
export { onShutdown } from "./shutdown.js";
export { runService } from "./runService.js";
export { startHealthServer, type HealthServer, type HealthServerOptions, type ReadinessChecks } from "./health.js";
export { TrackedBus } from "./trackedBus.js";
