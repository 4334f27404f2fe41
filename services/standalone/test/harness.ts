import { createLogger } from "@sched/logging";
import { buildOpenApiDocument } from "@sched/openapi";
import { ResponseValidator } from "@sched/openapi/response-validator";
import { clusterServersAvailable, createTestDatabase, deleteNamespaceStreams, NATS_URL, REDIS_URL, uniqueSuffix } from "@sched/testing";
import { System, type SystemOptions } from "../src/system.js";
import { migratedFolder } from "./migratedFolder.js";
import { errorDocUrl, type ErrorCode } from "@sched/proto";
import { afterAll, beforeAll } from "vitest";

export type WiringKind = "standalone" | "cluster";
export const WIRINGS: WiringKind[] = ["standalone", "cluster"];
export const ADMIN_TOKEN = "adm_test_token_0123456789abcdef";

export interface TestSystem {
  system: System;
  url: string;
  /** The NATS namespace of a cluster wiring, for processes that join it. */
  namespace?: string;
  /** The Postgres database of a cluster wiring, for processes that join it. */
  databaseUrl?: string;
  stop(): Promise<void>;
}

/** Whether a wiring can run here (cluster needs the real servers; in CI they are required). */
export async function wiringAvailable(kind: WiringKind): Promise<boolean> {
  return kind === "standalone" ? true : clusterServersAvailable();
}

/**
 * The whole system on an ephemeral port: standalone with in-memory PGlite and
 * the in-process bus, or cluster against real NATS (own namespace), a fresh
 * Postgres database and Redis.
 */
export async function startTestSystem(kind: WiringKind, gateway: SystemOptions["gateway"] = {}, serviceEnv: SystemOptions["serviceEnv"] = {}): Promise<TestSystem> {
  const logger = createLogger({ name: "e2e", level: "silent" });
  if (kind === "standalone") {
    const system = await new System({ wiring: { kind: "standalone", startFrom: await migratedFolder() }, logger, port: 0, adminToken: ADMIN_TOKEN, gateway, serviceEnv }).start();
    return { system, url: system.url, stop: () => system.stop() };
  }
  const database = await createTestDatabase();
  const namespace = `t${uniqueSuffix()}`;
  const system = await new System({
    wiring: { kind: "cluster", natsUrl: NATS_URL, databaseUrl: database.url, redisUrl: REDIS_URL, namespace },
    logger,
    port: 0,
    adminToken: ADMIN_TOKEN,
    gateway,
    serviceEnv,
  }).start();
  return {
    system,
    url: system.url,
    namespace,
    databaseUrl: database.url,
    stop: async () => {
      await system.stop();
      await database.drop();
      await deleteNamespaceStreams(NATS_URL, namespace);
    },
  };
}

/**
 * What one wiring's suite runs against: whether this machine can run the
 * wiring (CI has every one), and what `start` makes (a system, or a world
 * around one), started before the suite's tests and stopped after them.
 * `started` is read inside tests, once started.
 */
export async function perSuite<T extends { stop(): Promise<unknown> }>(wiring: WiringKind, start: () => Promise<T>) {
  const available = await wiringAvailable(wiring);
  let started: T | undefined;
  beforeAll(async () => {
    if (available) started = await start();
  });
  afterAll(async () => started?.stop());
  return {
    available,
    get started(): T {
      if (!started) throw new Error(`the ${wiring} system is not running`);
      return started;
    },
  };
}

/** The system of one wiring's suite (see perSuite); its `url` and `sys` are read inside tests, once started. */
export async function systemPerSuite(wiring: WiringKind, start: () => Promise<TestSystem> = () => startTestSystem(wiring)) {
  const suite = await perSuite(wiring, start);
  return {
    available: suite.available,
    get sys(): TestSystem {
      return suite.started;
    },
    get url(): string {
      return suite.started.url;
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // Response bodies are JSON of any shape; tests assert on them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** Paths outside the API, which the document does not describe: the index of where things are, probes and the HTML reference page. */
const OUTSIDE_THE_API = /^\/$|^\/(healthz|readyz|livez|metrics|docs)(\/|$)/;

let validator: ResponseValidator | undefined;

/**
 * Fails unless the response is what the OpenAPI document says this request
 * can get: a documented status, its required headers, a body of its schema
 * (an undocumented field included).
 */
export function expectDocumented(method: string, path: string, res: ApiResponse): void {
  if (OUTSIDE_THE_API.test(new URL(path, "http://localhost").pathname)) return;
  validator ??= new ResponseValidator(buildOpenApiDocument());
  const problems = validator.check(method, path, res);
  if (problems.length > 0) throw new Error(`response not as the OpenAPI document says:\n${problems.join("\n")}`);
}

/** fetch for a typed client: every response is checked against the document as well. */
export async function documentedFetch(request: Request): Promise<Response> {
  const res = await fetch(request);
  const text = await res.clone().text();
  const url = new URL(request.url);
  expectDocumented(request.method, `${url.pathname}${url.search}`, { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined });
  return res;
}

/** A plain HTTP call, as an external client makes it; the response is checked against the OpenAPI document. */
export async function call(
  url: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await fetch(`${url}${path}`, { method, headers, body });
  const text = await res.text();
  const response: ApiResponse = { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  expectDocumented(method, path, response);
  return response;
}

/** Creates a user and a key through the admin API. */
export async function createUserWithKey(
  url: string,
  options: { email?: string; name?: string; timezone?: string; mode?: "test" | "live"; scopes?: string[] } = {},
): Promise<{ userId: string; email: string; key: string; keyId: string }> {
  const email = options.email ?? `user-${uniqueSuffix()}@example.com`;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const user = await call(url, "POST", "/admin/v1/users", {
    headers: admin,
    body: { email, name: options.name ?? "Test User", ...(options.timezone ? { timezone: options.timezone } : {}) },
  });
  if (user.status !== 201) throw new Error(`user create failed: ${JSON.stringify(user.body)}`);
  const key = await call(url, "POST", `/admin/v1/users/${user.body.id}/api-keys`, {
    headers: admin,
    body: { mode: options.mode ?? "test", ...(options.scopes ? { scopes: options.scopes } : {}) },
  });
  if (key.status !== 201) throw new Error(`key create failed: ${JSON.stringify(key.body)}`);
  return { userId: user.body.id, email, key: key.body.key, keyId: key.body.id };
}

/** Asserts the error envelope of api-decisions part 1; its docUrl is under `publicBaseUrl` when the system has one, else relative. */
export function expectError(res: ApiResponse, status: number, code: ErrorCode, publicBaseUrl?: string): void {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  if (!String(res.headers.get("content-type")).startsWith("application/json")) throw new Error("error without JSON content type");
  const { error } = res.body;
  const fields = Object.keys(error).filter((f) => !["code", "message", "param", "requestId", "docUrl"].includes(f));
  if (typeof error.message !== "string" || error.requestId !== res.headers.get("x-request-id") || error.docUrl !== errorDocUrl(code as ErrorCode, publicBaseUrl) || fields.length > 0) {
    throw new Error(`bad envelope: ${JSON.stringify(res.body)}`);
  }
}
