import { loadConfigOrExit } from "@sched/config";
import { withinDeadline } from "@sched/deadline";
import { createLogger, type Logger } from "@sched/logging";
import { shutdownTelemetry, startTelemetry } from "@sched/telemetry";
import type { z } from "zod";
import { processConfigSchema, type ProcessConfig } from "./processConfig.js";
import { startHealthServer } from "./health.js";
import { onShutdown } from "./shutdown.js";

/** Time kept for flushing telemetry before a crashed process exits. */
const CRASH_FLUSH_MS = 1_000;

/** What a process registers with its shell while it starts. */
export interface ProcessShell<C> {
  readonly logger: Logger;
  /** The variables every process reads. */
  readonly process: ProcessConfig;
  /** The process's own variables. */
  readonly config: C;
  /** A readiness condition: /readyz is 503 while any is false. */
  ready(name: string, check: () => boolean | Promise<boolean>): void;
  /**
   * Something to stop at shutdown. Steps run in the reverse order of
   * registration (what started last stops first), each bounded by the
   * shutdown deadline (given to the step): a step that overruns it is cut
   * short and logged.
   */
  onStop(name: string, step: (deadline: number) => Promise<void>): void;
}

/**
 * The one way a process runs, the gateway's and every service's: its
 * environment parsed once (a bad variable ends it with a message naming
 * it), logs and telemetry, crash handlers that log and flush before the
 * exit, /livez, /readyz and /metrics, and one ordered shutdown on SIGTERM.
 * Shutdown is registered before start-up work, so a SIGTERM during it also
 * ends cleanly.
 */
export async function runProcess<S extends z.ZodObject>(name: string, configSchema: S, start: (shell: ProcessShell<z.output<S>>) => Promise<void>): Promise<void> {
  const processConfig = loadConfigOrExit(processConfigSchema);
  const config = loadConfigOrExit(configSchema);
  const logger = createLogger({ name, level: processConfig.LOG_LEVEL });
  exitOnCrash(logger);
  await startTelemetry({ serviceName: name });

  const checks: Array<[string, () => boolean | Promise<boolean>]> = [];
  const steps: Array<[string, (deadline: number) => Promise<void>]> = [];
  let stopping = false;
  let started = false;
  const health = await startHealthServer({
    port: processConfig.HEALTH_PORT,
    logger,
    stopping: () => stopping,
    // Until start-up has finished, the process is not ready: a condition registered early (the bus connected)
    // must not call it ready while the rest (the HTTP server's port) is still being set up.
    checks: async () => (!started || checks.length === 0 ? { starting: false } : Object.fromEntries(await Promise.all(checks.map(async ([n, check]) => [n, await check()] as const)))),
  });
  onShutdown(logger, processConfig.SHUTDOWN_GRACE_MS, async (deadline) => {
    stopping = true;
    // Readiness is false now; the load balancer needs a moment to stop sending work here.
    await sleep(Math.min(processConfig.SHUTDOWN_DELAY_MS, deadline - Date.now()));
    const failed = await stopInOrder([...steps].reverse(), deadline, logger);
    await health.close();
    if (failed) throw new Error("a shutdown step failed");
  });

  await start({
    logger,
    process: processConfig,
    config,
    ready: (check, fn) => void checks.push([check, fn]),
    onStop: (step, fn) => void steps.push([step, fn]),
  });
  started = true;
  logger.info("process started");
}

/**
 * A stray rejected promise or thrown error leaves the process in a state
 * nobody planned for: log it as fatal, flush telemetry so the trace of what
 * led there is kept, and exit non-zero for the orchestrator to restart it.
 */
function exitOnCrash(logger: Logger): void {
  let crashed = false;
  const crash = (kind: string) => (err: unknown) => {
    if (crashed) return;
    crashed = true;
    logger.fatal({ err }, `${kind}; the process exits`);
    void shutdownTelemetry(CRASH_FLUSH_MS)
      .catch(() => undefined)
      .finally(() => process.exit(70));
  };
  process.on("unhandledRejection", crash("unhandled promise rejection"));
  process.on("uncaughtException", crash("uncaught exception"));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Runs the steps one after another, each bounded by the deadline; true when one failed. */
async function stopInOrder(steps: Array<[string, (deadline: number) => Promise<void>]>, deadline: number, logger: Logger): Promise<boolean> {
  let failed = false;
  for (const [name, work] of steps) {
    const finished = work(deadline).then(
      () => "done" as const,
      (err: unknown) => {
        logger.error({ err, step: name }, "shutdown step failed");
        failed = true;
        return "failed" as const;
      },
    );
    const outcome = await withinDeadline(finished, deadline - Date.now(), () => "late" as const);
    if (outcome === "late") logger.warn({ step: name }, "shutdown step cut short at the deadline");
  }
  return failed;
}
