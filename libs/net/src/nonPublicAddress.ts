import { BlockList, isIP } from "node:net";

/**
 * Addresses that are not the public internet, which a request made for a
 * user (a webhook, a CalDAV server) may never reach unless the deployment
 * allows private ones: loopback, private (RFC 1918, unique local), carrier-grade NAT,
 * link-local (cloud metadata services live there: 169.254.169.254,
 * fd00:ec2::254), "this network", benchmarking, multicast and reserved ranges.
 */
const FORBIDDEN = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  FORBIDDEN.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96],
  ["2001:db8::", 32],
] as const) {
  FORBIDDEN.addSubnet(net, prefix, "ipv6");
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`), which reaches that IPv4 host. */
function mappedIpv4(address: string): string | undefined {
  const match = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (match) return match[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const high = Number.parseInt(hex[1]!, 16);
  const low = Number.parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** Whether an IP address (v4 or v6, as text, brackets allowed) is not on the public internet; anything else that is not an address counts as not public. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = isIP(bare);
  if (family === 0) return true;
  if (family === 6) {
    const v4 = mappedIpv4(bare);
    if (v4 !== undefined) return FORBIDDEN.check(v4, "ipv4");
    return FORBIDDEN.check(bare, "ipv6");
  }
  return FORBIDDEN.check(bare, "ipv4");
}
