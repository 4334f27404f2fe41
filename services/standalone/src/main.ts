import { loadConfigOrExit, localApiFile } from "@sched/config";
import { randomBase62 } from "@sched/ids";
import { createLogger } from "@sched/logging";
import { onShutdown } from "@sched/runtime";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { standaloneConfigSchema } from "./config.js";
import { createDemoUser } from "./demo.js";
import { serviceModules } from "./services.js";
import { System } from "./system.js";

const config = loadConfigOrExit(standaloneConfigSchema);
const logger = createLogger({ name: "standalone", level: config.LOG_LEVEL });
const dataDir = resolve(config.DATA_DIR);
const firstStart = !existsSync(join(dataDir, "accounts"));
mkdirSync(dataDir, { recursive: true });

const tokenFile = localApiFile(dataDir, "adminToken");
const adminToken = config.ADMIN_TOKEN ?? (existsSync(tokenFile) ? readFileSync(tokenFile, "utf8").trim() : `adm_${randomBase62(32)}`);
if (!config.ADMIN_TOKEN) writeFileSync(tokenFile, adminToken, { mode: 0o600 });

// Every service reads its own settings from the environment here too, as in a cluster:
// invites its SMTP_URL, GOOGLE_* and CALENDAR_TOKEN_KEY, ai-ranking its OPENAI_API_KEY and AI_MODEL.
const environment = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
const serviceEnv = Object.fromEntries(serviceModules.map((m) => [m.name, environment]));
// Errors link their documentation under the address the banner gives (a chosen port; an ephemeral one is known only once listening).
const publicBaseUrl = config.PUBLIC_BASE_URL ?? (config.PORT === 0 ? undefined : `http://localhost:${config.PORT}`);
const system = await new System({
  wiring: { kind: "standalone", dataDir },
  logger,
  port: config.PORT,
  adminToken,
  serviceEnv,
  ...(publicBaseUrl ? { gateway: { publicBaseUrl } } : {}),
}).start();
const base = system.url.replace("127.0.0.1", "localhost");
// The admin command line finds this API through the data folder, on whatever port it listens.
writeFileSync(localApiFile(dataDir, "apiUrl"), `${base}\n`);
const lines = [`Scheduling API (standalone) on ${base}   data: ${dataDir}`, `API reference: ${base}/docs   (what is where: ${base}/)`];
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
  );
}
if (!config.ADMIN_TOKEN) lines.push("", `Admin token (kept in ${tokenFile}): ${adminToken}`);
const dataDirArg = relative(process.cwd(), dataDir) === ".data" ? "" : `DATA_DIR=${dataDir} `;
lines.push("", `Admin command line (finds this API by itself): ${dataDirArg}npm run admin -- help`);
process.stdout.write(`${lines.join("\n")}\n`);

onShutdown(logger, 10_000, () => system.stop());
