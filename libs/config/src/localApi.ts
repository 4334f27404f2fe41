import { join } from "node:path";

/**
 * Files `npm start` keeps in its data folder so that tools on the same machine
 * (the admin command line) find the running API without being told: its base
 * URL, written once it listens, and the generated admin token.
 */
export const LOCAL_API_FILES = { apiUrl: "api-url", adminToken: "admin-token" } as const;

export function localApiFile(dataDir: string, name: keyof typeof LOCAL_API_FILES): string {
  return join(dataDir, LOCAL_API_FILES[name]);
}
