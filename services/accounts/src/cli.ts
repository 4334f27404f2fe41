// The admin command line: the dashboard's job (api-decisions 3), done over the gateway's admin API.
import { ConfigError, env as envSchemas, localApiFile, parseConfig } from "@sched/config";
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { z } from "zod";
import { USAGE, UsageError, adminRequest, failureMessage, parseCliArgs, requestUrl } from "./cli/commands.js";
import { resolveAdminTarget, unreachableMessage, type LocalFiles } from "./cli/target.js";

/**
 * Read here and only here: the CLI is a process of its own. Unset, the URL and
 * the token come from a local `npm start`'s data folder.
 */
const cliConfigSchema = z.object({
  API_URL: envSchemas.optional(z.string().url()),
  ADMIN_TOKEN: envSchemas.optional(z.string().min(1)),
  DATA_DIR: z.string().min(1).default(".data"),
});

function dataFolderFiles(dataDir: string): LocalFiles {
  const read = (name: "apiUrl" | "adminToken") => {
    const path = localApiFile(dataDir, name);
    return existsSync(path) ? readFileSync(path, "utf8") : undefined;
  };
  return {
    apiUrl: () => read("apiUrl"),
    adminToken: () => read("adminToken"),
    describe: (name) => relative(process.cwd(), localApiFile(dataDir, name)) || localApiFile(dataDir, name),
  };
}

const REQUEST_TIMEOUT_MS = 15_000;

async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let command;
  try {
    command = parseCliArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (command.command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }

  let target;
  try {
    const config = parseConfig(cliConfigSchema, env);
    target = resolveAdminTarget(config, dataFolderFiles(config.DATA_DIR));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 78;
  }

  const request = adminRequest(command);
  const url = requestUrl(target.apiUrl, request.path);
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method,
      headers: {
        authorization: `Bearer ${target.adminToken}`,
        accept: "application/json",
        ...(request.body ? { "content-type": "application/json" } : {}),
      },
      ...(request.body ? { body: JSON.stringify(request.body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    // fetch's own message is a bare "fetch failed"; the cause says why (ECONNREFUSED, a timeout, …).
    const cause = (err as { cause?: { message?: unknown } }).cause?.message;
    process.stderr.write(`${unreachableMessage(target, typeof cause === "string" ? cause : (err as Error).message)}\n`);
    return 1;
  }
  const text = await response.text();
  if (!response.ok) {
    process.stderr.write(`${failureMessage(response.status, text)}\n`);
    return 1;
  }
  process.stdout.write(`${prettyJson(text)}\n`);
  return 0;
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

process.exitCode = await main(process.argv.slice(2), process.env);
