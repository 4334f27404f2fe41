import { context } from "@opentelemetry/api";
import { getRPCMetadata, RPCType } from "@opentelemetry/core";
import type { IncomingMessage, ServerResponse } from "node:http";
import { now, recordHttpRequest } from "./metrics.js";

/** The label of requests no route matches: one series, however many paths are probed. */
export const UNMATCHED_ROUTE = "unmatched";

/** Where a response keeps the template of the route its request matched. */
const ROUTE = Symbol("sched.route");
type Named = ServerResponse & { [ROUTE]?: string };

/**
 * Names the route template (`/v1/meetings/:id`) a request matched, as the
 * handler that matched it knows it: the request is counted and timed under
 * it, and its server span (when tracing) is named after it. A request never
 * named counts as unmatched. Templates keep the label set small: ids never
 * become labels.
 */
export function nameRoute(res: ServerResponse, route: string): void {
  (res as Named)[ROUTE] = route;
  const rpc = getRPCMetadata(context.active());
  if (rpc?.type === RPCType.HTTP) {
    // The HTTP instrumentation names the span and sets http.route from this when the response ends.
    rpc.route = route;
    rpc.span.updateName(`${res.req.method ?? "GET"} ${route}`);
  }
}

/** Wraps an HTTP handler (an express app) so every request is counted and timed by the route `nameRoute` gave it. */
export function withHttpMetrics(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const startedAt = now();
    const method = req.method ?? "GET";
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      // A response never finished (the client went away) is counted with status 499, as nginx does.
      recordHttpRequest((res as Named)[ROUTE] ?? UNMATCHED_ROUTE, method, res.writableFinished ? res.statusCode : 499, startedAt);
    };
    // `on`, not `once`: `record` runs once by itself, and `once` wraps each listener in two objects more a request.
    res.on("finish", record);
    res.on("close", record);
    handler(req, res);
  };
}
