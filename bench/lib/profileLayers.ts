/**
 * Where a process's CPU goes, by layer of the request path, from a V8 CPU
 * profile (`node --cpu-prof`). Each sample taken within a time window is
 * given to the first layer that claims a frame of its stack, leaf first;
 * Node's own frames and native ones claim nothing, so a socket write or
 * `JSON.stringify` counts for whoever called it (the bus, express's
 * response), and a stack of nothing else (the HTTP parser, socket reads
 * before they reach a library) counts as the last layer.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** µs, on the monotonic clock `process.hrtime` reads. */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A layer and the frames that belong to it: a test of the script's URL or the function's name. */
export interface Layer {
  name: string;
  claims: RegExp;
}

/**
 * The gateway's layers, by the folders and files of services/gateway/src as
 * they are now (a layer whose pattern names no file claims nothing, and its
 * frames fall to whatever matches next: earlier patterns named folders since
 * gone, so the Redis link, the key cache and every step of the edge counted
 * as "express", which had no part in them). A socket write counts for its
 * caller: the Redis link's corked writes for the rate limit, `sendEncoded`'s
 * for the answer, the NATS transport's for the bus.
 */
export const GATEWAY_LAYERS: Layer[] = [
  { name: "request log recording", claims: /gateway\/src\/(inbound\/http|outbound)\/requestLog|domain\/requestBatches/ },
  { name: "logging/metrics", claims: /@opentelemetry|libs\/telemetry\/|\/pino\// },
  { name: "auth (key cache, hash)", claims: /gateway\/src\/outbound\/keys\/|libs\/ids\/src\/apiKeys|domain\/bearer/ },
  { name: "rate limit (Redis)", claims: /rate-limiter-flexible|ioredis|redis-parser|@ioredis|cluster-key-slot|gateway\/src\/outbound\/(rateLimits|redisLink)|domain\/(rateLimitHeaders|limits)/ },
  { name: "idempotency key", claims: /gateway\/src\/(outbound|domain)\/idempotency/ },
  { name: "route match", claims: /domain\/routeMatch/ },
  { name: "request body (read, checked, parsed)", claims: /gateway\/src\/inbound\/http\/body|domain\/jsonShape|node_modules\/(raw-body|body-parser|iconv-lite)\// },
  { name: "bus request (NATS)", claims: /@nats-io|libs\/bus\// },
  { name: "answer writing (headers, body, socket)", claims: /gateway\/src\/inbound\/http\/(reply|errors)|express\/lib\/response|node_modules\/send\/|content-type|mime/ },
  { name: "express routing and middleware", claims: /node_modules\/express\/|node_modules\/router\/|finalhandler|on-finished|parseurl|qs\// },
  { name: "the edge's own steps (app.ts: request id, places, hand-over)", claims: /gateway\/src\// },
];

/** A service's layers on the request path. */
export const SERVICE_LAYERS: Layer[] = [
  { name: "logging/metrics", claims: /@opentelemetry|libs\/telemetry\/|\/pino\// },
  { name: "validation (zod)", claims: /node_modules\/zod\// },
  { name: "SQL client (knex, pg)", claims: /node_modules\/knex\/|node_modules\/pg|libs\/db\/|src\/db\/queries/ },
  { name: "service handler", claims: /services\/[a-z-]+\/src\/|proto\/src\/|libs\/(ids|errors|time)\/|luxon/ },
  { name: "bus (NATS, dispatch)", claims: /@nats-io|libs\/bus\// },
];

export interface LayerShares {
  /** Samples in the window that were not idle. */
  busySamples: number;
  /** Busy samples per layer; "other" for stacks no layer claims. */
  byLayer: Map<string, number>;
}

/** What a stack no layer claims counts as: Node's HTTP server and its sockets, on their own. */
export const NODE_ITSELF = "HTTP parsing, sockets, timers (Node itself)";
export const GARBAGE_COLLECTION = "garbage collection";

/** Node's own and native frames: they work for whoever called them. */
const passesThrough = (url: string) => url === "" || url.startsWith("node:");

/** Shares of the busy samples of `file` taken between `fromUs` and `toUs` (monotonic µs), by layer. */
export function layerShares(file: string, layers: readonly Layer[], fromUs: number, toUs: number): LayerShares {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const layerOf = new Map<number, string | null>();
  const classify = (id: number): string | null => {
    const known = layerOf.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const { functionName, url } = node.callFrame;
    let layer: string | null;
    if (functionName === "(idle)") layer = null;
    else if (functionName === "(garbage collector)") layer = GARBAGE_COLLECTION;
    else {
      const own = passesThrough(url) ? undefined : layers.find((l) => l.claims.test(url));
      const up = parent.get(id);
      layer = own ? own.name : up === undefined ? NODE_ITSELF : classify(up) ?? NODE_ITSELF;
    }
    layerOf.set(id, layer);
    return layer;
  };
  const byLayer = new Map<string, number>();
  let busySamples = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const layer = classify(profile.samples[i]!);
    if (layer === null) continue;
    busySamples++;
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + 1);
  }
  return { busySamples, byLayer };
}
