import { serviceModules } from "@sched/standalone";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Daemon, startOnFreePorts } from "./daemon.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Every service, then the gateway: the processes `npm run cluster` starts. */
export const PROCESS_NAMES = [...serviceModules.map((m) => m.name), "gateway"];

export interface Products {
  gatewayUrl: string;
  processes: Map<string, Daemon>;
}

/**
 * Starts every service and the gateway as its own process, as `npm run
 * cluster` does (the same command line; the modules' development defaults,
 * then the environment, then `env`), each on fixed ports so a restart comes
 * back where clients and probes expect it. The services start first, so the
 * gateway's first requests find them.
 */
export async function startProducts(env: Record<string, string>, logs: string): Promise<Products> {
  const start = (name: string, ports: number) =>
    startOnFreePorts(ports, ([healthPort, port]) => {
      const ownEnv = { ...serviceModules.find((m) => m.name === name)?.standaloneEnv, ...process.env, ...env, HEALTH_PORT: String(healthPort), ...(port ? { PORT: String(port) } : {}) };
      const args = ["--conditions=@sched/source", "--import", "tsx", "--import", "@sched/telemetry/register", `services/${name}/src/main.ts`];
      const ready = async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`, { signal: AbortSignal.timeout(1_000) })).status === 200;
      return new Daemon({ name, command: process.execPath, args, options: { cwd: ROOT, env: ownEnv }, ready, startTimeoutMs: 120_000 }, join(logs, `${name}.log`));
    });
  const processes = new Map<string, Daemon>();
  const services = await Promise.allSettled(serviceModules.map((m) => start(m.name, 1)));
  for (const s of services) if (s.status === "fulfilled") processes.set(s.value.daemon.spec.name, s.value.daemon);
  const failed = services.find((s) => s.status === "rejected");
  if (failed) {
    await Promise.all([...processes.values()].map((d) => d.stop("SIGKILL")));
    throw failed.reason;
  }
  const gateway = await start("gateway", 2);
  processes.set("gateway", gateway.daemon);
  return { gatewayUrl: `http://127.0.0.1:${gateway.ports[1]}`, processes };
}

/** Whether every process answers its readiness probe now. */
export async function allReady(products: Products): Promise<boolean> {
  const states = await Promise.all([...products.processes.values()].map((d) => d.spec.ready().catch(() => false)));
  return states.every(Boolean);
}
