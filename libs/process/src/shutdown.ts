import type { Logger } from "@sched/logging";
import { shutdownTelemetry } from "@sched/telemetry";

/** Time kept for flushing telemetry after the process's own stop. */
const TELEMETRY_FLUSH_MS = 1_000;

/**
 * Runs `stop` once on SIGTERM or SIGINT, flushes telemetry and exits 0; a
 * stop that fails exits 1, and one that overruns the grace period is cut
 * short (exit 1) so the orchestrator's kill never comes first. `stop` is
 * given the time at which it should be done to leave room for the flush.
 */
export function onShutdown(logger: Logger, graceMs: number, stop: (deadline: number) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const startedAt = Date.now();
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error("shutdown overran its grace period");
      process.exit(1);
    }, graceMs);
    timer.unref();
    const deadline = startedAt + Math.max(0, graceMs - TELEMETRY_FLUSH_MS - 250);
    stop(deadline)
      .then(
        () => 0,
        (err: unknown) => {
          logger.error({ err }, "shutdown failed");
          return 1;
        },
      )
      .then(async (code) => {
        await shutdownTelemetry(Math.max(100, Math.min(TELEMETRY_FLUSH_MS, startedAt + graceMs - Date.now() - 100)));
        logger.info({ code, ms: Date.now() - startedAt }, "stopped");
        process.exit(code);
      });
  };
  process.once("SIGTERM", handle);
  process.once("SIGINT", handle);
}
