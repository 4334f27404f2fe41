import type { Logger } from "@sched/logging";

/**
 * Runs `stop` once on SIGTERM or SIGINT and exits; a stop that overruns the
 * grace period is cut short so the orchestrator's kill never comes first.
 */
export function onShutdown(logger: Logger, graceMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      logger.error("shutdown overran its grace period");
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", handle);
  process.once("SIGINT", handle);
}
