/** Setting up benchmark data through the public and admin APIs, as a client would. */
import { request } from "node:http";

export interface ApiUser {
  userId: string;
  email: string;
  key: string;
}

/**
 * One JSON call on a connection of its own: a pooled keep-alive connection
 * may be closed by the server while the event loop is busy seeding, and
 * reusing it then fails.
 */
export function callApi(url: string, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: unknown }> {
  const target = new URL(path, url);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string | number> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(body);
  }
  return new Promise((resolve, reject) => {
    const req = request(target, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function expectStatus(what: string, status: number, call: Promise<{ status: number; body: unknown }>): Promise<Record<string, unknown>> {
  const res = await call;
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, unknown>;
}

/** Limits out of the way, as a provider grants a large customer: the benchmarks measure the path, not the limiter's refusals. */
const BENCH_KEY_LIMITS = { standardPerMinute: 1_000_000, aiPerMinute: 1_000_000 };

/** A user with a test-mode key holding every scope, with the benchmark's own rate limits. */
export async function createUser(url: string, adminToken: string, user: { email: string; name: string; timezone?: string }): Promise<ApiUser> {
  const created = await expectStatus("user create", 201, callApi(url, "POST", "/admin/v1/users", { token: adminToken, body: user }));
  const userId = String(created.id);
  const key = await expectStatus("key create", 201, callApi(url, "POST", `/admin/v1/users/${userId}/api-keys`, { token: adminToken, body: { mode: "test" } }));
  await expectStatus("key limits", 200, callApi(url, "PATCH", `/admin/v1/api-keys/${String(key.id)}`, { token: adminToken, body: { rateLimits: BENCH_KEY_LIMITS } }));
  return { userId, email: user.email, key: String(key.key) };
}

/** `owner` trusts `other`: the visibility rule then counts `other` in owner's recommendations. */
export async function addContact(url: string, owner: ApiUser, otherEmail: string): Promise<void> {
  await expectStatus("contact create", 201, callApi(url, "POST", "/v1/contacts", { token: owner.key, body: { email: otherEmail } }));
}
