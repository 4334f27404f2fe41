import type { Mode } from "@sched/proto";
import { isIP } from "node:net";
import { isNonPublicAddress } from "@sched/net";

/** The host of a URL as a resolver or an address check takes it: IPv6 literals without their brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "");
}

/**
 * Why an endpoint URL may not be used, before any name is resolved; null when
 * it may. Live endpoints carry real data, so they must be `https`; a URL with
 * credentials would put a secret where it is shown and logged; an address
 * literal is checked here, a name once resolved.
 */
export function urlRefusal(url: URL, mode: Mode, allowPrivate: boolean): string | null {
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must be an http:// or https:// URL";
  if (mode === "live" && url.protocol !== "https:") return "must be an https:// URL for a live endpoint";
  if (url.username || url.password) return "must not carry a user name or password";
  const host = hostOf(url);
  if (!allowPrivate && isIP(host) !== 0 && isNonPublicAddress(host)) return "must not point to a private, loopback or link-local address";
  return null;
}

/** Why resolved addresses may not be reached; null when all may. Every one must pass, as the connection may use any. */
export function addressesRefusal(addresses: readonly string[], allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  return addresses.some(isNonPublicAddress) ? "resolves to a private, loopback or link-local address" : null;
}
