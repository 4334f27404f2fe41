import { randomBase62 } from "@sched/ids";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { serviceModules } from "./services.js";

/**
 * `npm run cluster`: every service and the gateway as its own process against
 * NATS_URL, DATABASE_URL and REDIS_URL (standard local ports by default), as
 * they run in production. Ctrl-C stops them all gracefully.
 */
const root = fileURLToPath(new URL("../../..", import.meta.url));
const adminToken = process.env.ADMIN_TOKEN ?? `adm_${randomBase62(32)}`;
const names = [...serviceModules.map((m) => m.name), "gateway"];

// One machine, one health port per process: HEALTH_PORT, HEALTH_PORT + 1, … in the order of `names`.
const healthBase = Number(process.env.HEALTH_PORT ?? 9464);

const children: ChildProcess[] = names.map((name, i) =>
  spawn(process.execPath, ["--conditions=@sched/source", "--import", "tsx", "--import", "@sched/telemetry/register", `services/${name}/src/main.ts`], {
    cwd: root,
    // A local cluster is for development: the modules' development-only defaults fill what the environment leaves unset.
    env: { ...serviceModules.find((m) => m.name === name)?.standaloneEnv, ...process.env, ADMIN_TOKEN: adminToken, HEALTH_PORT: String(healthBase + i) },
    stdio: ["ignore", "inherit", "inherit"],
  }),
);

process.stdout.write(
  `Scheduling API (cluster): ${names.join(", ")} as separate processes; gateway on http://localhost:${process.env.PORT ?? 8080}\n` +
    `Health ports (/livez, /readyz, /metrics): ${names.map((n, i) => `${n} ${healthBase + i}`).join(", ")}\n` +
    (process.env.ADMIN_TOKEN ? "" : `Admin token: ${adminToken}\n`),
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
