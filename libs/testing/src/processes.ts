import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { eventually, isListening } from "./index.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServiceProcess {
  port: number;
  url: string;
  /** What the process wrote to stdout and stderr so far. */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

function track(child: ChildProcess, port: number): ServiceProcess {
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    kill: async (signal = "SIGKILL") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A gateway process, as a replica runs in production, ready when its probe says so. */
export async function startGatewayProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const [port, healthPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "services/gateway/src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: String(port), HEALTH_PORT: String(healthPort) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const gateway = track(child, port);
  try {
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`gateway exited: ${gateway.output()}`);
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200;
    }, 45_000, 200);
  } catch (err) {
    await gateway.kill();
    throw err;
  }
  return gateway;
}

/** A throwaway redis-server that keeps nothing on disk, on `port` (a free one by default). */
export async function startRedisServer(port?: number): Promise<ServiceProcess> {
  const chosen = port ?? (await freePort());
  const child = spawn("redis-server", ["--port", String(chosen), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: ["ignore", "pipe", "pipe"] });
  const redis = track(child, chosen);
  await eventually(() => isListening(`redis://127.0.0.1:${chosen}`, chosen), 10_000, 50);
  return redis;
}
