import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { isIP, type LookupFunction, type Socket } from "node:net";
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
 * host and port), one pool for all endpoints: a busy endpoint's deliveries
 * do not each pay a TCP (and TLS) handshake. A connection is opened only
 * through the guarded lookup, so every pooled one goes to an address that
 * was checked when it was opened; a request on a reused one checks the
 * address again.
 */
const agents = { http: new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: "lifo" }), https: new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: "lifo" }) };

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
 * every address checked (literal or resolved, on a new connection or a
 * reused one), at most 64 KiB of the answer read, and the whole exchange cut
 * at `timeoutMs`. A kept-alive connection the receiver closed just as it was
 * reused is not held against the receiver: the POST is made once more, on a
 * new connection, within the same time.
 */
export async function postJson(url: URL, body: Buffer, headers: Record<string, string>, options: { timeoutMs: number; allowPrivate: boolean }): Promise<PostResult> {
  const started = performance.now();
  const host = hostOf(url);
  if (!options.allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host)) {
    return { status: null, error: `${host} is a private, loopback or link-local address`, durationMs: 0 };
  }
  const deadline = started + options.timeoutMs;
  let sent = await postOnce(url, body, headers, options.allowPrivate, deadline, options.timeoutMs);
  if (sent.staleConnection) sent = await postOnce(url, body, headers, options.allowPrivate, deadline, options.timeoutMs);
  return { status: sent.status, error: sent.error, durationMs: Math.round(performance.now() - started) };
}

/** One request; `staleConnection` when a reused connection failed before any answer. */
function postOnce(url: URL, body: Buffer, headers: Record<string, string>, allowPrivate: boolean, deadline: number, timeoutMs: number): Promise<{ status: number | null; error: string | null; staleConnection: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    const finish = (status: number | null, error: string | null, keepConnection = false, staleConnection = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // An answer read to its end leaves its connection to the pool; anything cut short closes it.
      if (!keepConnection) request.destroy();
      resolve({ status, error, staleConnection });
    };
    const https = url.protocol === "https:";
    const send = https ? httpsRequest : httpRequest;
    const request: ClientRequest = send(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-length": String(body.length), "user-agent": "scheduling-api-webhooks/1" },
      lookup: guardedLookup(allowPrivate),
      agent: https ? agents.https : agents.http,
    });
    const timer = setTimeout(() => finish(null, `no answer within ${timeoutMs} ms`), Math.max(0, deadline - performance.now()));
    request.on("socket", (socket: Socket) => {
      if (!request.reusedSocket || allowPrivate) return;
      const address = socket.remoteAddress;
      if (address && isNonPublicAddress(address)) finish(null, `${hostOf(url)} ${addressesRefusal([address], allowPrivate)}`);
    });
    request.on("error", (err: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && !answered && (err.code === "ECONNRESET" || err.code === "EPIPE");
      finish(null, err instanceof AddressRefused ? err.message : `could not reach the endpoint: ${err.message}`, false, stale);
    });
    request.on("response", (response: IncomingMessage) => {
      answered = true;
      const status = response.statusCode ?? null;
      const outcome = isDelivered(status) ? null : `the endpoint answered ${status}`;
      let read = 0;
      response.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_RESPONSE_BYTES) finish(status, outcome);
      });
      response.on("end", () => finish(status, outcome, true));
      response.on("error", () => finish(status, outcome));
    });
    request.end(body);
  });
}
