/** CPU time of processes by id, read from /proc, so a figure holds on a machine busy with other work. */
import { readFileSync } from "node:fs";

/** Linux's USER_HZ: /proc/<pid>/stat counts in hundredths of a second on every kernel Node.js supports. */
const TICK_US = 10_000;

/** User plus system CPU time of one process so far, in µs; 0 once it is gone. */
export function processCpuUs(pid: number): number {
  return cpuUsOf(`/proc/${pid}/stat`);
}

/**
 * The same of its main thread alone: in Node, its JavaScript's. The rest is
 * V8's helper threads (optimizing compiler, garbage collector) and libuv's,
 * which a CPU profile of the JavaScript does not see.
 */
function mainThreadCpuUs(pid: number): number {
  return cpuUsOf(`/proc/${pid}/task/${pid}/stat`);
}

function cpuUsOf(statFile: string): number {
  let stat: string;
  try {
    stat = readFileSync(statFile, "utf8");
  } catch {
    return 0;
  }
  // The name (field 2) may hold spaces and parentheses: the fields after it start past its last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** A named group of processes whose CPU time is counted together (a service, or Postgres's connections of one database). */
export interface CpuGroup {
  name: string;
  pids: () => Promise<number[]> | number[];
}

export interface CpuSnapshot {
  atMs: number;
  byPid: Map<number, number>;
  /** Each process's main thread's alone. */
  mainByPid: Map<number, number>;
  groups: Map<string, number[]>;
}

export async function cpuSnapshot(groups: readonly CpuGroup[]): Promise<CpuSnapshot> {
  const byPid = new Map<number, number>();
  const mainByPid = new Map<number, number>();
  const members = new Map<string, number[]>();
  for (const group of groups) {
    const pids = await group.pids();
    members.set(group.name, pids);
    for (const pid of pids) {
      byPid.set(pid, processCpuUs(pid));
      mainByPid.set(pid, mainThreadCpuUs(pid));
    }
  }
  return { atMs: performance.now(), byPid, mainByPid, groups: members };
}

/**
 * CPU µs each group used between two snapshots (`threads`: "main", of its
 * processes' main threads alone). A process that appears only in the later
 * one (a new database connection) counts from zero; one that went away in
 * between is lost, so runs keep their pools warm.
 */
export function cpuUsed(before: CpuSnapshot, after: CpuSnapshot, threads: "all" | "main" = "all"): Map<string, number> {
  const [from, to] = threads === "main" ? [before.mainByPid, after.mainByPid] : [before.byPid, after.byPid];
  const used = new Map<string, number>();
  for (const [name, pids] of after.groups) {
    let total = 0;
    for (const pid of pids) total += Math.max(0, (to.get(pid) ?? 0) - (from.get(pid) ?? 0));
    used.set(name, total);
  }
  return used;
}
