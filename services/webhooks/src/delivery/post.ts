import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { addressesRefusal, hostOf } from "../domain/endpointUrl.js";
import { isNonPublicAddress } from "@sched/net";
import { isDelivered } from "../domain/retry.js";

/** The most of a receiver's answer read; the rest is dropped, and nothing of it is stored. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** How long a check before any delivery waits for a name to resolve. */
const RESOLVE_TIMEOUT_MS = 2_000;

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
 * every address checked (literal or resolved), at most 64 KiB of the answer
 * read, and the whole exchange cut at `timeoutMs`.
 */
export function postJson(url: URL, body: string, headers: Record<string, string>, options: { timeoutMs: number; allowPrivate: boolean }): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const host = hostOf(url);
  if (!options.allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host)) {
    return Promise.resolve({ status: null, error: `${host} is a private, loopback or link-local address`, durationMs: 0 });
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve({ status, error, durationMs: elapsed() });
    };
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "user-agent": "scheduling-api-webhooks/1" },
      lookup: guardedLookup(options.allowPrivate),
      agent: false,
    });
    const timer = setTimeout(() => finish(null, `no answer within ${options.timeoutMs} ms`), options.timeoutMs);
    request.on("error", (err) => finish(null, err instanceof AddressRefused ? err.message : `could not reach the endpoint: ${err.message}`));
    request.on("response", (response: IncomingMessage) => {
      const status = response.statusCode ?? null;
      let read = 0;
      response.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read >= MAX_RESPONSE_BYTES) done();
      });
      const done = () => finish(status, isDelivered(status) ? null : `the endpoint answered ${status}`);
      response.on("end", done);
      response.on("error", done);
    });
    request.end(body);
  });
}
