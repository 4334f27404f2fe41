import type { Bus } from "@sched/bus";
import { AppError, checkIdempotencyKey } from "@sched/errors";
import { requestFingerprint } from "@sched/ids";
import type { Logger } from "@sched/logging";
import { IDEMPOTENCY_HEADER, IDEMPOTENT_REPLAYED_HEADER, JsonText, type Caller, type HttpReply, type RateBucket, type RouteDef } from "@sched/proto";
import { nameRoute, tracingEnabled } from "@sched/telemetry";
import express, { type Request, type Response } from "express";
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "node:querystring";
import proxyAddress from "proxy-addr";
import type { Authenticator, PresentedKey } from "../../outbound/keys/authenticator.js";
import { bearerToken } from "../../domain/bearer.js";
import { rateLimitHeaders, type BucketState } from "../../domain/rateLimitHeaders.js";
import { deprecationHeaders } from "../../domain/deprecation.js";
import { chooseRequestId } from "../../domain/requestId.js";
import { compileRoutes } from "../../domain/routeMatch.js";
import { jsonBodyReader } from "./body.js";
import { docsHandler, DOCS_PATHS } from "./docs.js";
import { errorAnswer, errorMiddleware } from "./errors.js";
import { handOn } from "./handover.js";
import type { RequestLimits } from "./server.js";
import { claimLeaseMs } from "../../domain/idempotency.js";
import { forwardOnce } from "../../outbound/idempotency/forwardOnce.js";
import type { IdempotencyStore } from "../../outbound/idempotency/store.js";
import { Places } from "./inFlight.js";
import { RateLimitedError, type RateLimits } from "../../outbound/rateLimits.js";
import { learn } from "./requestFacts.js";
import { sendEncoded, sendJson, sendText, setHeaders, setReplyHeaders } from "./reply.js";
import { servedRequestRecorder, type RequestLogSink } from "./requestLog.js";

export interface GatewayDeps {
  bus: Bus;
  logger: Logger;
  routes: readonly RouteDef[];
  authenticator: Authenticator;
  rateLimits: RateLimits;
  adminToken: string;
  busTimeoutMs: number;
  trustProxy: string;
  /** Idempotency-Key records of every public POST (api-decisions part 5). */
  idempotency: IdempotencyStore;
  /** Readiness beyond the bus connection (e.g. Redis); defaults to ready. */
  isReady?: () => Promise<boolean>;
  /** What one request, one client and all of them together may take of this replica. */
  edge: RequestLimits;
  /** Where the metadata of each request made with a key goes (the dashboard's request log). */
  requestLog?: RequestLogSink;
  /** Pages served on the API's port under their own path (the dashboard in standalone mode). */
  pages?: ReadonlyArray<{ mountPath: string; handler: (req: Request, res: Response, next: (err?: unknown) => void) => void }>;
  /** The deployment's public base URL, where errors' `docUrl` points; unknown, they are relative to the API's address. */
  publicBaseUrl?: string | undefined;
}

/** Request headers a service may need, forwarded on the bus request. */
// Google's push notifications carry their channel and its secret in X-Goog-* headers, not in a body.
const FORWARDED_HEADERS = ["Idempotency-Key", "traceparent", "tracestate", "X-Goog-Channel-ID", "X-Goog-Channel-Token", "X-Goog-Resource-State"] as const;
/** Each with the lower-case name Node keeps it under, worked out once. */
const FORWARDED = FORWARDED_HEADERS.map((name) => [name, name.toLowerCase()] as const);
const IDEMPOTENCY_LOWER_CASE = IDEMPOTENCY_HEADER.toLowerCase();

/**
 * An API request as the edge reads it: its path, its query and its client's
 * address, worked out by express when it carries the request and from the
 * URL (as express would) when it does not.
 */
interface ApiRequest {
  req: IncomingMessage;
  path: string;
  query: () => Record<string, unknown>;
  /** Through the trusted proxies, as express's `req.ip`. */
  address: () => string | undefined;
}

/** The handler of every request the gateway's port takes. */
export type GatewayHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The HTTP edge. For each request, in this order: request id, CORS refusal,
 * route match (404/405), authentication (401), rate limit (429), scope (403),
 * body (415/413/400), a place in progress (503), then the service over the
 * bus, whose validation and resource checks come last.
 *
 * API requests (under /v1/, not a page nor the OpenAPI document) are answered
 * by Node's request handler itself when tracing is off: express's router,
 * its prototypes swapped onto each request and response, and its per-request
 * layers cost a third to a half of the gateway's CPU a request
 * (docs/benchmarks.md) and add nothing to them. When tracing is on they go through express, whose
 * instrumentation makes the spans traces show. Everything else (health,
 * readiness, the docs, the dashboard's pages) is express's always.
 */
export function createGatewayApp(deps: GatewayDeps): GatewayHandler {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.set("trust proxy", parseTrustProxy(deps.trustProxy));
  const match = compileRoutes(deps.routes);
  // Worked out once: a route's deprecation headers go on every one of its answers, errors included.
  const deprecations = new Map(deps.routes.filter((r) => r.deprecation).map((r) => [r, deprecationHeaders(r.deprecation!)]));
  const readJsonBody = jsonBodyReader(deps.edge.maxJsonDepth);
  // A request takes a place in progress only once its body is in: a slow sender holds a place among bodies being received, apart.
  const inProgress = new Places(deps.edge.maxInFlight, deps.edge.inFlightSharePercent, "requests in progress");
  const receiving = new Places(deps.edge.maxInFlight, deps.edge.inFlightSharePercent, "request bodies being received");

  const recordServed = deps.requestLog ? servedRequestRecorder(deps.requestLog) : undefined;
  const pageMounts = (deps.pages ?? []).map((p) => p.mountPath);
  // Paths under /v1/ that are neither the OpenAPI document nor a page go to the routes at once, past the layers below.
  const isApiPath = (path: string) => path.startsWith("/v1/") && !DOCS_PATHS.has(path) && !pageMounts.some((mount) => path === mount || path.startsWith(`${mount}/`));

  // Trusting no proxy (the default), a client's address is its socket's peer: express's `req.ip` reads X-Forwarded-For only to drop it.
  const trusted = app.get("trust proxy") === false ? undefined : (app.get("trust proxy fn") as (address: string, hop: number) => boolean);
  const answerError = errorAnswer(deps.logger, deps.publicBaseUrl);

  /** What every request meets first: request id, URL length and Host, no conditional requests, the request log. */
  const enter = (req: IncomingMessage, res: ServerResponse, url: string): void => {
    const requestId = chooseRequestId(req.headers["x-request-id"] as string | undefined);
    learn(res, { requestId });
    res.setHeader("X-Request-Id", requestId);
    refuseAtEdge(req, url, deps.edge);
    unconditional(req);
    recordServed?.(req, res);
  };

  app.use((req, res, next) => {
    enter(req, res, req.originalUrl);
    if (isApiPath(req.path)) answer(throughExpress(req), res).catch(next);
    else next();
  });

  for (const pages of deps.pages ?? []) {
    app.use((req, res, next) => (req.path === pages.mountPath || req.path.startsWith(`${pages.mountPath}/`) ? pages.handler(req, res, next) : next()));
  }

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const ready = deps.bus.isConnected() && (deps.isReady ? await deps.isReady() : true);
    res.status(ready ? 200 : 503).json({ status: ready ? "ready" : "not_ready" });
  });

  app.use(docsHandler(deps.routes, deps.pages?.[0]?.mountPath));

  async function answer(api: ApiRequest, res: ServerResponse): Promise<void> {
    const { req, path } = api;
    if (req.method === "OPTIONS") {
      throw new AppError("forbidden", "This API is for servers: browser cross-origin requests are not allowed.");
    }
    const method = req.method!;
    const matched = match(method === "HEAD" ? "GET" : method, path);
    if (matched.kind === "not_found") throw new AppError("not_found", `No route for ${method} ${path}.`);
    if (matched.kind === "method_not_allowed") {
      throw new AppError("method_not_allowed", `${method} is not allowed on ${path}.`, { allow: matched.allow });
    }
    const { route, params } = matched;
    learn(res, { routePath: route.path });
    nameRoute(res, route.path);
    const deprecated = deprecations.get(route);
    if (deprecated) setHeaders(res, deprecated);
    // Read once: it is worked out anew (through the trusted proxies) on every read.
    const address = api.address() ?? "unknown";
    const presented = route.auth === "api-key" ? deps.authenticator.present(req.headers.authorization) : undefined;
    const known = presented && "caller" in presented ? presented.caller : undefined;
    // A read of a key well below its limit goes to its service while it is counted (docs/api.md, "Rate limits"); its scope is checked first, as nothing past a refusal may go.
    const countingBeside =
      known && route.bucket && holdsScope(known, route) && deps.rateLimits.mayCountBeside(method, route.bucket, known, address) ? countKnown(res, address, deps, route.bucket, known) : undefined;
    // Handled at once: it is awaited later, and a refusal meanwhile is no unhandled rejection.
    countingBeside?.catch(ignore);
    try {
      await serve(api, res, route, params, address, countingBeside ? known : await callerOf(route, presented, req, res, address), countingBeside);
    } catch (err) {
      // The count's refusal (429) comes before whatever the request met after it, as when the count is awaited first.
      if (countingBeside) await countingBeside;
      throw err;
    }
  }

  async function callerOf(route: RouteDef, presented: PresentedKey | undefined, req: IncomingMessage, res: ServerResponse, address: string): Promise<Caller | undefined> {
    if (route.auth === "admin") return checkAdmin(req, address, deps);
    if (presented) return authenticate(presented, res, address, deps, route.bucket);
    await countRequest(res, deps.rateLimits.consumeKeyless(address), itself);
    return undefined;
  }

  /** From the scope on: the request, counted or being counted, handed on to its service and answered. */
  async function serve(
    api: ApiRequest,
    res: ServerResponse,
    route: RouteDef,
    params: Record<string, string>,
    address: string,
    caller: Caller | undefined,
    countingBeside: Promise<unknown> | undefined,
  ): Promise<void> {
    const { req, path } = api;
    const method = req.method!;
    if (caller && !holdsScope(caller, route)) {
      throw new AppError("forbidden", `This API key lacks the required scope: ${route.scope}.`);
    }
    const holders = caller ? [`address:${address}`, `key:${caller.apiKeyId}`] : [`address:${address}`];
    const body = route.hasBody ? await whileHolding(res, receiving.take(holders), () => readJsonBody(req, res)) : undefined;
    // A response closes once, and a place is given back once however often asked: no `once` wrapper needed.
    res.on("close", inProgress.take(holders));
    const idempotencyKey = route.idempotent && caller ? readIdempotencyKey(req) : undefined;
    const headers: Record<string, string> = {};
    for (const [name, lowerCase] of FORWARDED) {
      // Node joins a repeated header of these names into one string.
      const value = req.headers[lowerCase] as string | undefined;
      if (value !== undefined) headers[name] = value;
    }
    const query = { ...api.query() };
    handOn(res);
    // An idempotent POST adds the headers of its key's guard (forwardOnce).
    const forward = (guard?: Record<string, string>): Promise<HttpReply> =>
      deps.bus.forward(route.endpoint, { params, query, body }, { ...(caller ? { caller } : {}), timeoutMs: deps.busTimeoutMs, headers: guard ? { ...headers, ...guard } : headers });
    // A count running beside decides the answer, whichever way the request was forwarded.
    const { reply, replayed } =
      caller && idempotencyKey !== undefined
        ? await decidedByCount(
            countingBeside,
            forwardOnce(
              deps.idempotency,
              deps.logger,
              {
                apiKeyId: caller.apiKeyId,
                idempotencyKey,
                fingerprint: requestFingerprint(method, path, { query, body }),
                leaseMs: claimLeaseMs(deps.busTimeoutMs),
              },
              forward,
            ),
          )
        : { reply: await decidedByCount(countingBeside, forward()), replayed: false };
    const { status, body: replyBody, headers: replyHeaders } = reply;
    if (replyHeaders) setReplyHeaders(res, replyHeaders);
    if (replayed) res.setHeader(IDEMPOTENT_REPLAYED_HEADER, "true");
    if (replyBody === undefined || status === 204) {
      res.statusCode = status;
      res.end();
    }
    // A reply the service marks as plain text (Graph's subscription handshake wants its token back so) is its string as is.
    else if (replyHeaders?.["Content-Type"]?.startsWith("text/plain") && replyBody instanceof JsonText) {
      res.statusCode = status;
      sendText(res, String(replyBody.toJSON()));
    } else if (replyBody instanceof JsonText) sendEncoded(res, status, replyBody.encoded);
    else sendJson(res, status, replyBody);
  }

  // Any other path: its 404 (or 405) envelope, as under /v1/.
  app.use((req: Request, res: Response) => answer(throughExpress(req), res));
  app.use(errorMiddleware(deps.logger, deps.publicBaseUrl));

  return (req, res) => {
    const url = req.url ?? "/";
    const path = tracingEnabled() ? undefined : apiPathOf(url);
    if (path === undefined || !isApiPath(path)) {
      app(req, res);
      return;
    }
    const api = new DirectRequest(req, path, path.length < url.length ? url.slice(path.length + 1) : "", trusted);
    try {
      enter(req, res, url);
    } catch (err) {
      answerError(err, res);
      return;
    }
    answer(api, res).catch((err: unknown) => answerError(err, res));
  };
}

/**
 * A request answered without express, read from its URL as express would.
 * Its readings are methods, not closures made for each request: a request's
 * garbage is what makes the gateway's scavenges (docs/benchmarks.md).
 */
class DirectRequest implements ApiRequest {
  constructor(
    readonly req: IncomingMessage,
    readonly path: string,
    private readonly search: string,
    /** Undefined when no proxy is trusted. */
    private readonly trusted: ((address: string, hop: number) => boolean) | undefined,
  ) {}

  query(): Record<string, unknown> {
    return parseQuery(this.search);
  }

  address(): string | undefined {
    return this.trusted ? proxyAddress(this.req, this.trusted) : this.req.socket.remoteAddress;
  }
}

/** A request express carries, read through express. */
function throughExpress(req: Request): ApiRequest {
  return { req, path: req.path, query: () => req.query as Record<string, unknown>, address: () => req.ip };
}

/**
 * The path of a URL under /v1/ as express reads it (parseurl), when it can
 * be read so simply: a URL in another form (absolute, or with a character
 * that makes parseurl parse it in full, such as `#`) is left to express.
 */
function apiPathOf(url: string): string | undefined {
  if (!url.startsWith("/v1/") || UNUSUAL_URL.test(url)) return undefined;
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The characters on which parseurl gives up its quick reading of a URL. */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * Refuses what no route should spend effort on: an over-long URL (414), and
 * an HTTP/1.1 request without the Host header it must carry (400; Node
 * would answer it without the envelope).
 */
function refuseAtEdge(req: IncomingMessage, url: string, limits: GatewayDeps["edge"]): void {
  // Bytes are never fewer than UTF-16 units: only a URL that might be too long is counted in bytes.
  if (url.length * 3 > limits.maxUrlBytes && Buffer.byteLength(url) > limits.maxUrlBytes) {
    throw new AppError("uri_too_long", `The URL is longer than ${limits.maxUrlBytes} bytes.`);
  }
  if (req.httpVersion === "1.1" && req.headers.host === undefined) {
    throw new AppError("invalid_request", "An HTTP/1.1 request must carry a Host header.", { param: "Host" });
  }
}

/** Request headers that would let express (or a static file) answer 304 or 412 instead of the resource. */
const CONDITIONAL_HEADERS = ["if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range"] as const;

/**
 * The API keeps no validators (no ETag, no Last-Modified on its answers), so
 * it does not take conditional requests: without this, `If-None-Match: *`
 * would pass express's freshness check and get a bodiless 304.
 */
function unconditional(req: IncomingMessage): void {
  for (const name of CONDITIONAL_HEADERS) if (req.headers[name] !== undefined) delete req.headers[name];
}

/** Runs `work` holding a place, given back when it ends or the client goes, whichever comes first. */
async function whileHolding<T>(res: ServerResponse, giveBack: () => void, work: () => Promise<T>): Promise<T> {
  res.on("close", giveBack);
  try {
    return await work();
  } finally {
    giveBack();
  }
}

/** The Idempotency-Key header, if any; a bad value is a 400 naming the header. */
function readIdempotencyKey(req: IncomingMessage): string | undefined {
  const value = req.headers[IDEMPOTENCY_LOWER_CASE] as string | undefined;
  return value === undefined ? undefined : checkIdempotencyKey(value);
}

/**
 * Checks the admin token. A wrong one counts as a failed authentication of
 * the client address, as a wrong API key does; an address past its
 * allowance is refused whatever token it sends, the right one included, so
 * that a refusal says nothing about a guess.
 */
async function checkAdmin(req: IncomingMessage, address: string, deps: GatewayDeps): Promise<undefined> {
  const exhausted = await deps.rateLimits.authFailuresExhausted(address);
  if (exhausted) throw new RateLimitedError(exhausted);
  const token = bearerToken(req.headers.authorization);
  const expected = Buffer.from(deps.adminToken);
  const given = Buffer.from(token ?? "");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    await deps.rateLimits.recordAuthFailure(address);
    throw new AppError("unauthorized", "Missing or invalid admin token.");
  }
  return undefined;
}

/**
 * The caller of an API-key route, counted in the route's bucket. An address
 * past its failed-authentication allowance is refused whatever key it
 * sends. A key this gateway resolved recently is no guess, so its address
 * check and its count go to Redis together, in one command; any other key
 * is looked up only once the address check has passed.
 */
async function authenticate(presented: PresentedKey, res: ServerResponse, address: string, deps: GatewayDeps, bucket: RateBucket | undefined): Promise<Caller> {
  if ("caller" in presented) return countKnown(res, address, deps, bucket, presented.caller);
  const exhausted = await deps.rateLimits.authFailuresExhausted(address);
  if (exhausted) throw new RateLimitedError(exhausted);
  let caller: Caller;
  try {
    caller = await deps.authenticator.authenticate(presented);
  } catch (err) {
    if (err instanceof AppError && err.code === "unauthorized") await deps.rateLimits.recordAuthFailure(address);
    throw err;
  }
  // Known from here on, whatever the answer: the request log counts a key's refusals (429) too.
  learn(res, { caller });
  if (bucket) await countRequest(res, deps.rateLimits.consume(bucket, caller), itself);
  return caller;
}

/** A key resolved here recently: its count and its address's check in one go. */
async function countKnown(res: ServerResponse, address: string, deps: GatewayDeps, bucket: RateBucket | undefined, caller: Caller): Promise<Caller> {
  learn(res, { caller });
  const exhausted = bucket
    ? (await countRequest(res, deps.rateLimits.consumeKnown(bucket, caller, address), countedOf)).authFailuresExhausted
    : await deps.rateLimits.authFailuresExhausted(address);
  if (exhausted) throw new RateLimitedError(exhausted);
  return caller;
}

/** Whether the caller's key has the route's scope, if it asks for one. */
const holdsScope = (caller: Caller, route: RouteDef): boolean => !route.scope || caller.scopes.includes(route.scope);

const ignore = (): void => undefined;

/** The reply, or, when its count ran beside it, the count's refusal if it refuses. */
const decidedByCount = <T>(counting: Promise<unknown> | undefined, replying: Promise<T>): Promise<T> => (counting === undefined ? replying : countedBeside(counting, replying));

/** A reply whose count ran beside it: a refusal by the count is the answer, and the reply is dropped unread. */
async function countedBeside<T>(counting: Promise<unknown>, replying: Promise<T>): Promise<T> {
  // Handled at once: a reply failing while the count is awaited is no unhandled rejection, and still thrown below.
  replying.catch(ignore);
  await counting;
  return replying;
}

const countedOf = (known: { counted: BucketState }) => known.counted;
const itself = (state: BucketState) => state;

/**
 * Waits for a request's count and sets its rate-limit headers, a refusal's
 * (429) included. The count is passed as a promise and read by a function made
 * once, not by a closure made for every request.
 */
async function countRequest<T>(res: ServerResponse, counting: Promise<T>, stateOf: (counted: T) => BucketState): Promise<T> {
  try {
    const counted = await counting;
    setHeaders(res, rateLimitHeaders(stateOf(counted), Date.now()));
    return counted;
  } catch (err) {
    if (err instanceof RateLimitedError) setHeaders(res, rateLimitHeaders(err.state, Date.now()));
    throw err;
  }
}

function parseTrustProxy(value: string): boolean | number | string {
  if (value === "false") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
