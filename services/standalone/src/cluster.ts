import { servicesAnsweringIn } from "@sched/bus";
import { loadConfigOrExit } from "@sched/config";
import { DEV_IDEMPOTENCY_SEAL_KEY, GATEWAY_NODE_OPTIONS } from "@sched/gateway";
import { randomBase62 } from "@sched/ids";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { clusterConfigSchema } from "./clusterConfig.js";
import { clusterRefusals } from "./domain/clusterRefusals.js";
import { freePorts, portTaken, takenPorts } from "./ports.js";
import { serviceModules } from "./services.js";

/**
 * `npm run cluster`: every service and the gateway as its own process against
 * NATS_URL, DATABASE_URL and REDIS_URL (standard local ports by default), as
 * they run in production. Ctrl-C stops them all gracefully. It starts nothing
 * when another system answers on its BUS_NAMESPACE or one of its ports is taken.
 */
const root = fileURLToPath(new URL("../../..", import.meta.url));
const config = loadConfigOrExit(clusterConfigSchema);
const adminToken = config.ADMIN_TOKEN ?? `adm_${randomBase62(32)}`;
const dashboardUrl = config.DASHBOARD_URL ?? `http://localhost:${config.DASHBOARD_PORT}/dashboard`;
const names = [...serviceModules.map((m) => m.name), "gateway"];
/** Each process's development-only defaults: a service module's own, and the gateway's seal key. */
const developmentEnv = (name: string): Record<string, string> | undefined =>
  name === "gateway" ? { IDEMPOTENCY_SEAL_KEY: DEV_IDEMPOTENCY_SEAL_KEY } : serviceModules.find((m) => m.name === name)?.standaloneEnv;

const healthPorts = config.HEALTH_PORT === undefined ? await freePorts(names.length) : names.map((_, i) => config.HEALTH_PORT! + i);
let answering: string[];
try {
  answering = await servicesAnsweringIn(config.NATS_URL, config.BUS_NAMESPACE);
} catch (err) {
  process.stderr.write(`NATS_URL=${config.NATS_URL} does not answer: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
const refusals = clusterRefusals({
  natsUrl: config.NATS_URL,
  namespace: config.BUS_NAMESPACE,
  answering,
  ...((await portTaken(config.PORT)) ? { gatewayPortTaken: config.PORT } : {}),
  ...((await portTaken(config.DASHBOARD_PORT)) ? { dashboardPortTaken: config.DASHBOARD_PORT } : {}),
  ...(config.HEALTH_PORT === undefined ? {} : { healthPortBase: config.HEALTH_PORT }),
  healthPortsTaken: config.HEALTH_PORT === undefined ? [] : await takenPorts(names.map((name, i) => ({ name, port: healthPorts[i]! }))),
});
if (refusals.length > 0) {
  process.stderr.write(`Not starting the cluster:\n${refusals.map((r) => `  - ${r}\n`).join("")}`);
  process.exit(1);
}

const children: ChildProcess[] = names.map((name, i) =>
  spawn(process.execPath, [...(name === "gateway" ? GATEWAY_NODE_OPTIONS : []), "--conditions=@sched/source", "--import", "tsx", "--import", "@sched/telemetry/register", `services/${name}/src/main.ts`], {
    cwd: root,
    // A local cluster is for development: the development-only defaults fill what the environment leaves unset.
    env: {
      ...developmentEnv(name),
      ...process.env,
      BUS_NAMESPACE: config.BUS_NAMESPACE,
      PORT: String(config.PORT),
      ADMIN_TOKEN: adminToken,
      HEALTH_PORT: String(healthPorts[i]),
      DASHBOARD_PORT: String(config.DASHBOARD_PORT),
      DASHBOARD_URL: dashboardUrl,
    },
    stdio: ["ignore", "inherit", "inherit"],
  }),
);

process.stdout.write(
  `Scheduling API (cluster): ${names.join(", ")} as separate processes on bus namespace ${config.BUS_NAMESPACE}; ` +
    `gateway on http://localhost:${config.PORT}, dashboard on ${dashboardUrl}\n` +
    `Health ports (/livez, /readyz, /metrics): ${names.map((n, i) => `${n} ${healthPorts[i]}`).join(", ")}\n` +
    (config.ADMIN_TOKEN ? "" : `Admin token: ${adminToken}\n`),
);

let stopping = false;
const stopAll = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill(signal);
};
process.on("SIGINT", () => stopAll("SIGTERM"));
process.on("SIGTERM", () => stopAll("SIGTERM"));
for (const [i, child] of children.entries()) {
  child.on("exit", (code) => {
    if (!stopping) {
      process.stderr.write(`${names[i]} exited (${code}); stopping the cluster\n`);
      stopAll("SIGTERM");
    }
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) process.exit(stopping ? 0 : 1);
  });
}
