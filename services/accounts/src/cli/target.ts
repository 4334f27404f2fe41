import { ConfigError } from "@sched/config";

export interface AdminTarget {
  apiUrl: string;
  adminToken: string;
  /** Where the URL came from, so a failure to reach it can say what to change. */
  apiUrlSource: string;
}

export interface TargetSettings {
  API_URL?: string | undefined;
  ADMIN_TOKEN?: string | undefined;
  DATA_DIR: string;
}

/** The files of a local `npm start`, read by name; undefined when absent. */
export interface LocalFiles {
  apiUrl(): string | undefined;
  adminToken(): string | undefined;
  /** How to name the files in messages. */
  describe(name: "apiUrl" | "adminToken"): string;
}

const FALLBACK_API_URL = "http://localhost:8080";

/**
 * Which API the admin command line talks to, with which token: what the
 * environment says, else what a local `npm start` wrote into its data folder
 * (so it works on any PORT without setup), else the default URL. A missing
 * token is a ConfigError that says exactly what to set.
 */
export function resolveAdminTarget(settings: TargetSettings, local: LocalFiles): AdminTarget {
  const localUrl = settings.API_URL ? undefined : local.apiUrl()?.trim();
  const apiUrl = settings.API_URL ?? (localUrl || FALLBACK_API_URL);
  const apiUrlSource = settings.API_URL ? "API_URL" : localUrl ? local.describe("apiUrl") : "the default (API_URL unset)";
  const adminToken = settings.ADMIN_TOKEN ?? local.adminToken()?.trim();
  if (!adminToken) {
    throw new ConfigError([
      `ADMIN_TOKEN: not set, and no ${local.describe("adminToken")} of a local \`npm start\`; set it to the gateway's admin token`,
    ]);
  }
  return { apiUrl, adminToken, apiUrlSource };
}

/** What to tell the operator when the API did not answer at all. */
export function unreachableMessage(target: AdminTarget, cause: string): string {
  return (
    `Could not reach ${target.apiUrl} (from ${target.apiUrlSource}): ${cause}\n` +
    "Is the API running? Start it with `npm start`, or set API_URL to the gateway's address (e.g. API_URL=http://localhost:3000)."
  );
}
