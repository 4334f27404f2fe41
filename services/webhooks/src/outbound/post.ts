import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent, Client, type Dispatcher } from "undici";
import { addressesRefusal, hostOf } from "../domain/endpointUrl.js";
import { isNonPublicAddress } from "@sched/net";
import { isDelivered } from "../domain/retry.js";

/** The most of a receiver's answer read; the rest is dropped, and nothing of it is stored. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** How long a check before any delivery waits for a name to resolve. */
const RESOLVE_TIMEOUT_MS = 2_000;

/**
 * How long a kept-alive connection waits idle for the next delivery before it
 * is closed: below the 5 s most servers keep one (a receiver's own
 * `Keep-Alive: timeout` hint, when shorter, wins).
 */
const IDLE_CONNECTION_MS = 4_000;

/**
 * Connections kept alive between deliveries, pooled by origin (protocol,
 * host and port) in one undici agent for all endpoints (one per setting of
 * private addresses): a busy endpoint's deliveries pay no TCP (and TLS)
 * handshake, and a request costs a fraction of the CPU of `node:http`'s. A
 * connection is opened only through the guarded lookup, so every pooled one
 * goes to an address that was checked when it was opened; the name is
 * resolved once a connection, not once a delivery.
 */
const agents = new Map<boolean, Agent>();
const connectOptions = (allowPrivate: boolean) => ({ lookup: guardedLookup(allowPrivate) });
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ keepAliveTimeout: IDLE_CONNECTION_MS, keepAliveMaxTimeout: IDLE_CONNECTION_MS, connect: connectOptions(allowPrivate) });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/** What one POST to a receiver came to. */
export interface PostResult {
  /** The HTTP status; null when no answer came. */
  status: number | null;
  /** Why no acceptable answer came, for the attempt's record; null on a 2xx. */
  error: string | null;
  durationMs: number;
}

/** A refusal to reach an address, told apart from network errors so its message is the reason. */
class AddressRefused extends Error {}

/**
 * Resolves a name as the connection will, and refuses it when any address
 * is forbidden. Used as the socket's own lookup, the check and the
 * connection see the same answer: a name that resolves to a public address
 * at the check and a private one at the connection (DNS rebinding) cannot slip through.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const refusal = addressesRefusal(addresses.map((a) => a.address), allowPrivate);
      if (refusal) return callback(new AddressRefused(`${hostname} ${refusal}`), "", 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** Why a URL's host may not be reached, resolving a name when need be; null when it may. For checks before any delivery. */
export async function hostRefusal(url: URL, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  const host = hostOf(url);
  if (isIP(host) !== 0) return isNonPublicAddress(host) ? "must not point to a private, loopback or link-local address" : null;
  return new Promise((resolve) => {
    // A name that does not resolve now (or not in time) may later; every delivery checks it again.
    const timer = setTimeout(() => resolve(null), RESOLVE_TIMEOUT_MS);
    dnsLookup(host, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      resolve(err ? null : addressesRefusal(addresses.map((a) => a.address), allowPrivate));
    });
  });
}

/**
 * POSTs a JSON body to a receiver: no redirect followed (a 3xx is a failure),
 * every address checked (literal, or resolved for each new connection), at
 * most 64 KiB of the answer read, and the whole exchange cut at `timeoutMs`.
 * A connection the receiver closed before any answer came (a kept-alive one
 * closed just as it was reused, most often) is not held against the
 * receiver: the POST is made once more, on a new connection, within the
 * same time; at least once allows the repeat.
 */
export async function postJson(url: URL, body: Buffer, headers: Record<string, string>, options: { timeoutMs: number; allowPrivate: boolean }): Promise<PostResult> {
  const started = performance.now();
  const host = hostOf(url);
  if (!options.allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host)) {
    return { status: null, error: `${host} is a private, loopback or link-local address`, durationMs: 0 };
  }
  const timedOut = new AbortController();
  const timer = setTimeout(() => timedOut.abort(), options.timeoutMs);
  try {
    let sent = await postOnce(agentFor(options.allowPrivate), url, body, headers, options, timedOut.signal);
    if (sent.closedBeforeAnswer && !timedOut.signal.aborted) {
      // On a connection of its own: the pool's other kept-alive ones may be as stale.
      const fresh = new Client(url.origin, { connect: connectOptions(options.allowPrivate) });
      try {
        sent = await postOnce(fresh, url, body, headers, options, timedOut.signal);
      } finally {
        void fresh.destroy().catch(() => undefined);
      }
    }
    return { status: sent.status, error: sent.error, durationMs: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
  }
}

/** Errors of a connection closed under a request, before any answer. */
const CLOSED_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);

/** One request; `closedBeforeAnswer` when the connection was closed before any answer came. */
async function postOnce(
  dispatcher: Dispatcher,
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean },
  signal: AbortSignal,
): Promise<{ status: number | null; error: string | null; closedBeforeAnswer: boolean }> {
  let status: number;
  let answer: Dispatcher.ResponseData["body"];
  try {
    ({ statusCode: status, body: answer } = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "user-agent": "scheduling-api-webhooks/1" },
      body,
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    }));
  } catch (err) {
    if (signal.aborted) return { status: null, error: `no answer within ${options.timeoutMs} ms`, closedBeforeAnswer: false };
    const refused = refusalOf(err);
    if (refused) return { status: null, error: refused, closedBeforeAnswer: false };
    const code = (err as { code?: string }).code;
    return { status: null, error: `could not reach the endpoint: ${(err as Error).message}`, closedBeforeAnswer: code !== undefined && CLOSED_CODES.has(code) };
  }
  const outcome = isDelivered(status) ? null : `the endpoint answered ${status}`;
  // An answer read to its end leaves its connection to the pool; one cut short (too long, or too late) closes it.
  let read = 0;
  try {
    for await (const chunk of answer) {
      read += (chunk as Buffer).length;
      if (read >= MAX_RESPONSE_BYTES) {
        answer.destroy();
        break;
      }
    }
  } catch {
    // The status came: an answer cut short is still that answer.
  }
  return { status, error: outcome, closedBeforeAnswer: false };
}

/** The refusal a guarded lookup gave, wherever the client wrapped it. */
function refusalOf(err: unknown): string | null {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e instanceof AddressRefused) return e.message;
  return null;
}
