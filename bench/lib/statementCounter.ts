/**
 * Preloaded (`--import`) into the processes a benchmark starts: counts the
 * SQL statements the process sends through `pg`, by kind, and writes the
 * counts so far to statementsFile(its pid) whenever it is sent SIGUSR2, so
 * that a benchmark can count the statements of a window of its own.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** Where the process of `pid` writes its counts: statement text (its first 100 characters) → times sent. */
export function statementsFile(pid: number): string {
  return join(tmpdir(), "sched-bench-statements", `${pid}.json`);
}

const byKind: Record<string, number> = {};
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  const first = args[0] as string | { text?: string } | undefined;
  const text = typeof first === "string" ? first : first?.text ?? "?";
  // A list of row ids written into the text (the outbox relay's mark) is one kind, whatever the ids.
  const kind = text.replace(/\s+/g, " ").replace(/\bin \(\d+(?:, \d+)*\)/g, "in (…)").trim().slice(0, 100);
  byKind[kind] = (byKind[kind] ?? 0) + 1;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;
process.on("SIGUSR2", () => {
  mkdirSync(join(tmpdir(), "sched-bench-statements"), { recursive: true });
  writeFileSync(statementsFile(process.pid), JSON.stringify(byKind));
});
