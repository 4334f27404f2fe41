import { MAX_PER_MINUTE_LIMIT, PerMinuteLimit } from "@sched/proto";
import { parseArgs } from "node:util";

/** Thrown for a command line that cannot be run; the message says what to change. */
export class UsageError extends Error {
  override name = "UsageError";
}

export const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  user:create --email <email> --name <name> [--timezone <IANA zone>]
  user:find   --email <email>
  user:sign-in-link --user <usr_…>
              a single-use link to the dashboard for the user, valid 15 minutes
  key:create  --user <usr_…> --mode test|live [--scopes a,b,…] [--name <name>]
  key:revoke  --key <key_…>
  key:limits  --key <key_…> [--standard <per minute>|default] [--ai <per minute>|default]
  calendar:attach --user <usr_…> --access-token <token> --refresh-token <token>
                  [--expires-at <ISO time>] [--account-email <email>] [--provider google|microsoft]
              attaches a Google Calendar grant to the user (tests, demos)
  help

Environment:
  API_URL      the gateway (default: the one a local \`npm start\` wrote to
               DATA_DIR/api-url, else http://localhost:8080)
  ADMIN_TOKEN  the gateway's admin token (default: DATA_DIR/admin-token of a
               local \`npm start\`)
  DATA_DIR     the data folder of a local \`npm start\` (default .data)
`;

export type CliCommand =
  | { command: "help" }
  | { command: "user:create"; email: string; name: string; timezone?: string }
  | { command: "user:find"; email: string }
  | { command: "user:sign-in-link"; userId: string }
  | { command: "key:create"; userId: string; mode: "test" | "live"; scopes?: string[]; name?: string }
  | { command: "key:revoke"; keyId: string }
  | { command: "key:limits"; keyId: string; rateLimits: { standardPerMinute?: number | null; aiPerMinute?: number | null } }
  | { command: "calendar:attach"; userId: string; accessToken: string; refreshToken: string; expiresAt?: string; accountEmail?: string; provider?: string };

type OptionSpec = Record<string, { type: "string" }>;

const OPTIONS = {
  "user:create": { email: { type: "string" }, name: { type: "string" }, timezone: { type: "string" } },
  "user:find": { email: { type: "string" } },
  "user:sign-in-link": { user: { type: "string" } },
  "key:create": { user: { type: "string" }, mode: { type: "string" }, scopes: { type: "string" }, name: { type: "string" } },
  "key:revoke": { key: { type: "string" } },
  "key:limits": { key: { type: "string" }, standard: { type: "string" }, ai: { type: "string" } },
  "calendar:attach": { user: { type: "string" }, "access-token": { type: "string" }, "refresh-token": { type: "string" }, "expires-at": { type: "string" }, "account-email": { type: "string" }, provider: { type: "string" } },
} satisfies Record<Exclude<CliCommand["command"], "help">, OptionSpec>;

type CommandName = keyof typeof OPTIONS;

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(OPTIONS, name);
}

/** Reads `<command> [--option value …]`; every mistake is a UsageError naming it. */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError("Missing command.");
  if (name === "help" || name === "--help" || name === "-h") return { command: "help" };
  if (!isCommandName(name)) throw new UsageError(`Unknown command: ${name}.`);

  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({ args: [...rest], options: OPTIONS[name] as OptionSpec, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError(`${name}: ${(err as Error).message}`);
  }
  const required = (option: string): string => {
    const value = values[option]?.trim();
    if (!value) throw new UsageError(`${name}: missing --${option}.`);
    return value;
  };
  const optional = (option: string): string | undefined => {
    if (values[option] === undefined) return undefined;
    return required(option);
  };

  switch (name) {
    case "user:create": {
      const timezone = optional("timezone");
      return { command: name, email: required("email"), name: required("name"), ...(timezone ? { timezone } : {}) };
    }
    case "user:find":
      return { command: name, email: required("email") };
    case "user:sign-in-link":
      return { command: name, userId: required("user") };
    case "key:create": {
      const mode = required("mode");
      if (mode !== "test" && mode !== "live") throw new UsageError(`${name}: --mode must be test or live.`);
      const scopes = optional("scopes")
        ?.split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      if (scopes !== undefined && scopes.length === 0) throw new UsageError(`${name}: --scopes lists no scope.`);
      const keyName = optional("name");
      return { command: name, userId: required("user"), mode, ...(scopes ? { scopes } : {}), ...(keyName ? { name: keyName } : {}) };
    }
    case "key:revoke":
      return { command: name, keyId: required("key") };
    case "key:limits": {
      // "default" hands the bucket back to the deployment's limit.
      const perMinute = (option: string): number | null | undefined => {
        const value = optional(option);
        if (value === undefined || value === "default") return value === undefined ? undefined : null;
        const limit = /^\d+$/.test(value) ? PerMinuteLimit.safeParse(Number(value)) : undefined;
        if (!limit?.success) throw new UsageError(`${name}: --${option} must be a whole number of requests a minute from 1 to ${MAX_PER_MINUTE_LIMIT}, or default.`);
        return limit.data;
      };
      const standard = perMinute("standard");
      const ai = perMinute("ai");
      if (standard === undefined && ai === undefined) throw new UsageError(`${name}: give --standard, --ai or both.`);
      return {
        command: name,
        keyId: required("key"),
        rateLimits: { ...(standard !== undefined ? { standardPerMinute: standard } : {}), ...(ai !== undefined ? { aiPerMinute: ai } : {}) },
      };
    }
    case "calendar:attach": {
      const expiresAt = optional("expires-at");
      const accountEmail = optional("account-email");
      const provider = optional("provider");
      return {
        command: name,
        userId: required("user"),
        accessToken: required("access-token"),
        refreshToken: required("refresh-token"),
        ...(expiresAt ? { expiresAt } : {}),
        ...(accountEmail ? { accountEmail } : {}),
        ...(provider ? { provider } : {}),
      };
    }
  }
}

export interface AdminRequest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Path under the gateway's base URL, query included. */
  path: string;
  body?: Record<string, unknown>;
}

/** The admin API call (api-decisions 3) a command makes. */
export function adminRequest(command: Exclude<CliCommand, { command: "help" }>): AdminRequest {
  switch (command.command) {
    case "user:create": {
      const { command: _, ...body } = command;
      return { method: "POST", path: "/admin/v1/users", body };
    }
    case "user:find":
      return { method: "GET", path: `/admin/v1/users?${new URLSearchParams({ email: command.email }).toString()}` };
    case "user:sign-in-link":
      return { method: "POST", path: `/admin/v1/users/${encodeURIComponent(command.userId)}/sign-in-links` };
    case "key:create": {
      const { command: _, userId, ...body } = command;
      return { method: "POST", path: `/admin/v1/users/${encodeURIComponent(userId)}/api-keys`, body };
    }
    case "key:revoke":
      return { method: "DELETE", path: `/admin/v1/api-keys/${encodeURIComponent(command.keyId)}` };
    case "key:limits":
      return { method: "PATCH", path: `/admin/v1/api-keys/${encodeURIComponent(command.keyId)}`, body: { rateLimits: command.rateLimits } };
    case "calendar:attach": {
      const { command: _, userId, ...body } = command;
      return { method: "POST", path: `/admin/v1/users/${encodeURIComponent(userId)}/calendar-connections`, body: { ...body, provider: body.provider ?? "google" } };
    }
  }
}

/** `base` may carry a path prefix (`https://host/api`); the admin path is appended to it. */
export function requestUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

/** What to tell the operator about a failed call, from the API's error body when it has one. */
export function failureMessage(status: number, responseText: string): string {
  try {
    const body = JSON.parse(responseText) as { error?: { code?: unknown; message?: unknown; param?: unknown } };
    const error = body.error;
    if (error && typeof error.message === "string") {
      const code = typeof error.code === "string" ? ` ${error.code}` : "";
      return `Error ${status}${code}: ${error.message}`;
    }
  } catch {
    // Not JSON (a proxy's error page, say): fall through to the raw text.
  }
  const text = responseText.trim().slice(0, 500);
  return text ? `Error ${status}: ${text}` : `Error ${status}.`;
}
