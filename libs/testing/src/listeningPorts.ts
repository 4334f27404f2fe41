import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";

/** The state of a listening socket in /proc/net/tcp and tcp6. */
const LISTEN = "0A";

/**
 * The TCP ports a process listens on: its sockets (the inodes its open file
 * descriptors link to) among the listening ones of its network namespace;
 * none once it has ended. Undefined where there is no /proc to tell (not Linux).
 */
export function listeningPorts(pid: number): Set<number> | undefined {
  try {
    const inodes = new Set<string>();
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const target = readlinkOrUndefined(`/proc/${pid}/fd/${fd}`);
      const inode = target && /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    }
    const ports = new Set<number>();
    for (const table of ["tcp", "tcp6"]) {
      // Each line after the heading: sl, local address (hex address:hex port), remote address, state, …, inode (the tenth field).
      for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
        const fields = line.trim().split(/\s+/);
        if (fields[3] === LISTEN && inodes.has(fields[9]!)) ports.add(parseInt(fields[1]!.split(":")[1]!, 16));
      }
    }
    return ports;
  } catch {
    return existsSync("/proc/self/net/tcp") ? new Set() : undefined;
  }
}

/** A descriptor closed between the listing and the reading links to nothing. */
function readlinkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
