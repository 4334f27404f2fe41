/** The command line of `npm run faults`. */

const FAULT_KINDS = ["kill", "nats", "postgres", "redis"] as const;

export interface FaultOptions {
  /** In the order they run: `kill:<process>` for each process killed, then `nats`, `postgres`, `redis`. */
  faults: string[];
  /** Meeting writes (creates and updates) started per second. */
  rate: number;
  /** Seconds of traffic around each fault. */
  seconds: number;
  /** Where to keep the processes' logs; by default they go with the temporary folder. */
  logs?: string;
}

export const USAGE = "usage: npm run faults -- [--faults kill,nats,postgres,redis | kill:<process>,…] [--rate 20] [--seconds 20] [--logs <dir>]";

/**
 * Reads the arguments (`--name value` or `--name=value`). `processes` are the
 * names `kill` expands to, in order. Throws a message naming the bad argument.
 */
export function parseOptions(args: readonly string[], processes: readonly string[]): FaultOptions {
  const given = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--(faults|rate|seconds|logs)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unknown argument: ${arg}`);
    const value = match[2] ?? args[++i];
    if (value === undefined || value === "") throw new Error(`--${match[1]} needs a value`);
    given.set(match[1]!, value);
  }
  return {
    faults: faultList(given.get("faults") ?? FAULT_KINDS.join(","), processes),
    rate: positive("rate", given.get("rate") ?? "20", 200),
    seconds: positive("seconds", given.get("seconds") ?? "20", 600),
    ...(given.has("logs") ? { logs: given.get("logs")! } : {}),
  };
}

function faultList(value: string, processes: readonly string[]): string[] {
  const faults: string[] = [];
  for (const name of value.split(",").map((s) => s.trim())) {
    if (name === "kill") faults.push(...processes.map((p) => `kill:${p}`));
    else if (name.startsWith("kill:") && processes.includes(name.slice(5))) faults.push(name);
    else if ((FAULT_KINDS as readonly string[]).includes(name)) faults.push(name);
    else throw new Error(`--faults: unknown fault "${name}" (kill, kill:<${processes.join("|")}>, nats, postgres, redis)`);
  }
  return [...new Set(faults)];
}

function positive(name: string, value: string, most: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > most) throw new Error(`--${name} must be a whole number from 1 to ${most}, not "${value}"`);
  return n;
}
