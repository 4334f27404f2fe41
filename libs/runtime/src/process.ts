// The process shell without the database: what the gateway, which has no database code, may load.
export { processConfigSchema, type ProcessConfig } from "./commonConfig.js";
export { runProcess, type ProcessShell } from "./processShell.js";
export { startHealthServer, type HealthServer, type HealthServerOptions, type ReadinessChecks } from "./health.js";
export { onShutdown } from "./shutdown.js";
