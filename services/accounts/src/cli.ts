// The admin command line: the dashboard's job (api-decisions 3), done over the gateway's admin API.
import { ConfigError, env as envSchemas, parseConfig } from "@sched/config";
import { z } from "zod";
import { USAGE, UsageError, adminRequest, failureMessage, parseCliArgs, requestUrl } from "./cli/commands.js";

/** Read here and only here: the CLI is a process of its own. */
const cliConfigSchema = z.object({
  API_URL: envSchemas.url("http://localhost:8080"),
  ADMIN_TOKEN: z.string().min(1),
});

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

  let config;
  try {
    config = parseConfig(cliConfigSchema, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 78;
  }

  const request = adminRequest(command);
  const url = requestUrl(config.API_URL, request.path);
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method,
      headers: {
        authorization: `Bearer ${config.ADMIN_TOKEN}`,
        accept: "application/json",
        ...(request.body ? { "content-type": "application/json" } : {}),
      },
      ...(request.body ? { body: JSON.stringify(request.body) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    // fetch's own message is a bare "fetch failed"; the cause says why (ECONNREFUSED, a timeout, …).
    const cause = (err as { cause?: { message?: unknown } }).cause?.message;
    process.stderr.write(`Could not reach ${config.API_URL}: ${typeof cause === "string" ? cause : (err as Error).message}\n`);
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
