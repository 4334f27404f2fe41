import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema.js";

// schema.ts is generated from docs/openapi.json by `npm run openapi`; never edit it by hand.
export type { components, operations, paths } from "./schema.js";

export interface SchedulingClientOptions {
  /** Where the API is, without the `/v1` (e.g. `https://api.example.com`). */
  baseUrl: string;
  /** An `sk_test_…` or `sk_live_…` key; a server-side secret. */
  apiKey: string;
  /** Headers sent with every request, besides Authorization. */
  headers?: Record<string, string>;
  /** Another fetch (for tests or instrumentation). */
  fetch?: (request: Request) => Promise<Response>;
}

export type SchedulingClient = Client<paths>;

/**
 * A typed client of the public API: paths, parameters, bodies and the
 * answers of every status come from the OpenAPI document.
 */
export function createSchedulingClient(options: SchedulingClientOptions): SchedulingClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ""),
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

export { verifyWebhook, type WebhookEvent, type WebhookHeaders } from "./webhooks.js";
