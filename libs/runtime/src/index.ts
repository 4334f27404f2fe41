export * from "./service.js";
export { onShutdown, processConfigSchema, runProcess, startHealthServer, type HealthServer, type ProcessConfig, type ProcessShell } from "@sched/process";
export { commonConfigSchema, type CommonConfig } from "./commonConfig.js";
export { runService } from "./runService.js";
export { startModule, type ModuleWiring, type StartedModule } from "./startModule.js";
export { TrackedBus } from "./trackedBus.js";
