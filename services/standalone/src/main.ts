import { loadConfigOrExit, localApiFile } from "@sched/config";
import { randomBase62 } from "@sched/ids";
import { gatewaySettings } from "@sched/gateway";
import { createLogger } from "@sched/logging";
import { onShutdown } from "@sched/runtime";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { standaloneConfigSchema } from "./config.js";
import { createDemoUser } from "./demo.js";
import { serviceModules } from "./services.js";
import { EMBEDDED_DATABASE_FOLDER, System } from "./system.js";

const config = loadConfigOrExit(standaloneConfigSchema);
// The gateway's tunables (RATE_LIMIT_*, BUS_TIMEOUT_MS, …) mean the same here as in its own process.
const gateway = gatewaySettings.fromEnvironment(loadConfigOrExit(gatewaySettings.environment));
const logger = createLogger({ name: "standalone", level: config.LOG_LEVEL });
const dataDir = resolve(config.DATA_DIR);
if (!existsSync(join(dataDir, EMBEDDED_DATABASE_FOLDER)) && existsSync(join(dataDir, "accounts", "PG_VERSION"))) {
  process.stderr.write(
    `${dataDir} holds data of an earlier version, which kept one database per service; this version keeps every service in one (${EMBEDDED_DATABASE_FOLDER}/) and does not read the old folders.\n` +
      `Move that folder away (or set DATA_DIR to another one) and start again.\n`,
  );
  process.exit(1);
}
const firstStart = !existsSync(join(dataDir, EMBEDDED_DATABASE_FOLDER));
mkdirSync(dataDir, { recursive: true });
process.stdout.write(`Starting the scheduling API (standalone), data in ${dataDir}\n`);

const tokenFile = localApiFile(dataDir, "adminToken");
const adminToken = config.ADMIN_TOKEN ?? (existsSync(tokenFile) ? readFileSync(tokenFile, "utf8").trim() : `adm_${randomBase62(32)}`);
if (!config.ADMIN_TOKEN) writeFileSync(tokenFile, adminToken, { mode: 0o600 });

// Every service reads its own settings from the environment here too, as in a cluster:
// invites its SMTP_URL, GOOGLE_* and CALENDAR_TOKEN_KEY, ai-ranking its OPENAI_API_KEY and AI_MODEL.
const environment = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
const serviceEnv = Object.fromEntries(serviceModules.map((m) => [m.name, environment]));
// Errors link their documentation under the address the banner gives (a chosen port; an ephemeral one is known only once listening).
const publicBaseUrl = gateway.publicBaseUrl ?? (config.PORT === 0 ? undefined : `http://localhost:${config.PORT}`);
const onStage = (stage: string, ms: number) => process.stdout.write(`  ${stage} (${(ms / 1_000).toFixed(1)} s)\n`);
const system = await new System({
  wiring: { kind: "standalone", dataDir },
  logger,
  port: config.PORT,
  adminToken,
  serviceEnv,
  gateway: { ...gateway, publicBaseUrl },
  onStage,
}).start();
const base = system.url.replace("127.0.0.1", "localhost");
// The admin command line finds this API through the data folder, on whatever port it listens.
writeFileSync(localApiFile(dataDir, "apiUrl"), `${base}\n`);
const lines = [`Scheduling API (standalone) on ${base}   data: ${dataDir}`, `API reference: ${base}/docs   (what is where: ${base}/)   dashboard: ${base}/dashboard`];
if (firstStart) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const demo = await createDemoUser(system.bus, zone);
  lines.push(
    "",
    `Demo user ${demo.email} (time zone ${zone}). Its test-mode API key, shown only now:`,
    `  ${demo.key}`,
    "",
    "Try:",
    `  curl -s ${base}/v1/me -H "Authorization: Bearer ${demo.key}"`,
    "",
    `Dashboard: ${base}/dashboard — the demo user's sign-in link (works once, until ${demo.signInLink.expiresAt}):`,
    `  ${demo.signInLink.url}`,
  );
}
if (!config.ADMIN_TOKEN) lines.push("", `Admin token (kept in ${tokenFile}): ${adminToken}`);
const dataDirArg = relative(process.cwd(), dataDir) === ".data" ? "" : `DATA_DIR=${dataDir} `;
lines.push("", `Admin command line (finds this API by itself): ${dataDirArg}npm run admin -- help`);
process.stdout.write(`${lines.join("\n")}\n`);

onShutdown(logger, 10_000, () => system.stop());
