export * from "./service.js";
export { onShutdown, processConfigSchema, runProcess, startHealthServer, type HealthServer, type ProcessConfig, type ProcessShell } from "@sched/process";
export { commonConfigSchema, type CommonConfig } from "./commonConfig.js";
export { runService } from "./runService.js";
export { TrackedBus } from "./trackedBus.js";
