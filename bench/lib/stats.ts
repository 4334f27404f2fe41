/** Latency summaries and plain-text tables for the benchmark reports. */

export interface Summary {
  count: number;
  median: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of sorted values (p in 0–100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    median: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

/**
 * Requests slower than `thresholdMs`, and in how many windows of `perWindow` consecutive
 * requests (latencies in the order sent, at a fixed rate) they fall: many in few windows
 * is a stall of everything at once, as many windows as requests is a cost spread evenly.
 */
export function slowRequests(latenciesMs: readonly number[], thresholdMs: number, perWindow: number): { count: number; windows: number } {
  const windows = new Set<number>();
  let count = 0;
  latenciesMs.forEach((latency, i) => {
    if (latency <= thresholdMs) return;
    count++;
    windows.add(Math.floor(i / perWindow));
  });
  return { count, windows: windows.size };
}

/**
 * How many requests slower than `thresholdMs` were in flight while the load
 * driver itself was paused (its own garbage collections, `pauses` as [start,
 * end] on the clock of `sentAtMs`): their time holds some of the driver's.
 */
export function slowDuringPauses(latenciesMs: readonly number[], sentAtMs: readonly number[], pauses: ReadonlyArray<readonly [number, number]>, thresholdMs: number): number {
  let count = 0;
  latenciesMs.forEach((latency, i) => {
    if (latency <= thresholdMs) return;
    const from = sentAtMs[i]!;
    if (pauses.some(([start, end]) => start < from + latency && end > from)) count++;
  });
  return count;
}

/** Milliseconds with two decimals. */
export const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : "-");

/** Prints a right-aligned table under a title. */
export function printTable(title: string, header: string[], rows: Array<Array<string | number>>): void {
  console.log(`\n${title}`);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: Array<string | number>) => cells.map((c, i) => String(c).padStart(widths[i]!)).join("  ");
  console.log(line(header));
  for (const r of rows) console.log(line(r));
}

/** Times `run` `runs` times after a short warm-up; milliseconds. */
export async function measure(run: () => unknown, runs: number, warmup = Math.min(10, runs)): Promise<Summary> {
  for (let k = 0; k < warmup; k++) await run();
  const times: number[] = [];
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  return summarize(times);
}
