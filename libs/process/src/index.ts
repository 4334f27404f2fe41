// The process shell, with no database code: what the gateway loads, and what runService builds on.
export { processConfigSchema, type ProcessConfig } from "./processConfig.js";
export { runProcess, type ProcessShell } from "./processShell.js";
export { startHealthServer, type HealthServer, type HealthServerOptions, type ReadinessChecks } from "./health.js";
export { onShutdown } from "./shutdown.js";
export { closeHttpServer } from "./closeHttpServer.js";
