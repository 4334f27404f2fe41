import { freePort } from "@sched/testing";
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";

export interface DaemonSpec {
  name: string;
  command: string;
  args: string[];
  options?: SpawnOptions;
  /** Whether it serves yet (a port answers, a probe says ready). */
  ready: () => Promise<boolean>;
  /** How long a start may take before the run gives up. */
  startTimeoutMs: number;
}

/**
 * One process the fault suite runs and breaks: started and restarted with the
 * same command line, its output appended to one log file across restarts.
 */
export class Daemon {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly log: WriteStream;

  constructor(
    readonly spec: DaemonSpec,
    logFile: string,
  ) {
    this.log = createWriteStream(logFile, { flags: "a" });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Spawns the process and resolves once it is ready; a process that exits first fails the start. */
  async start(): Promise<void> {
    const child = spawn(this.spec.command, this.spec.args, { ...this.spec.options, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    let gone: string | undefined;
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => ((gone = `exited (${signal ?? code})`), resolve())));
    child.once("error", (err) => (gone = err.message));
    const end = Date.now() + this.spec.startTimeoutMs;
    for (;;) {
      if (gone) throw new Error(`${this.spec.name} ${gone} while starting; see ${this.log.path as string}`);
      if (await this.spec.ready().catch(() => false)) return;
      if (Date.now() > end) throw new Error(`${this.spec.name} not ready after ${this.spec.startTimeoutMs} ms; see ${this.log.path as string}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Sends `signal` and waits for the process to exit (a SIGKILL after `graceMs` if it has not). */
  async stop(signal: NodeJS.Signals, graceMs = 30_000): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  async restart(signal: NodeJS.Signals): Promise<void> {
    await this.stop(signal);
    await this.start();
  }

  /** Ends the log once the process is gone. */
  close(): Promise<void> {
    return new Promise((resolve) => this.log.end(resolve));
  }
}

/**
 * Builds a daemon on `count` free ports and starts it; when the start fails
 * (another process on the machine may take a free port first) tries again on
 * other ports. Resolves with the daemon and its ports.
 */
export async function startOnFreePorts(count: number, make: (ports: number[]) => Daemon, tries = 3): Promise<{ daemon: Daemon; ports: number[] }> {
  for (let attempt = 1; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePort());
    const daemon = make(ports);
    try {
      await daemon.start();
      return { daemon, ports };
    } catch (err) {
      await daemon.stop("SIGKILL");
      await daemon.close();
      if (attempt >= tries) throw err;
    }
  }
}
