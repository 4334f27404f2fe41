import { readFileSync } from "node:fs";

/**
 * The machine's CPU pressure so far (Linux's PSI, `/proc/pressure/cpu`): µs
 * during which at least one runnable task waited for a core. Undefined where
 * the kernel does not tell. On a shared machine it says, better than the load
 * average, how much of a run's latency can be queueing for a core.
 */
export function cpuWaitUs(): number | undefined {
  try {
    const some = readFileSync("/proc/pressure/cpu", "utf8").split("\n").find((line) => line.startsWith("some "));
    const total = some?.match(/total=(\d+)/)?.[1];
    return total === undefined ? undefined : Number(total);
  } catch {
    return undefined;
  }
}
