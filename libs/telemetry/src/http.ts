import { context } from "@opentelemetry/api";
import { getRPCMetadata, RPCType } from "@opentelemetry/core";
import type { IncomingMessage, ServerResponse } from "node:http";
import { now, recordHttpRequest } from "./metrics.js";

/** Maps a request to its route template (`/v1/meetings/:id`), or undefined when no route matches. */
export type RouteOf = (method: string, path: string) => string | undefined;

/** The label of requests no route matches: one series, however many paths are probed. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Wraps an HTTP handler (an express app) so every request is counted and
 * timed by route template, and the request's server span is named after the
 * route. Templates keep the label set small: ids never become labels.
 */
export function withHttpMetrics(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  routeOf: RouteOf,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const startedAt = now();
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const route = routeOf(method, q === -1 ? url : url.slice(0, q)) ?? UNMATCHED_ROUTE;
    const rpc = getRPCMetadata(context.active());
    if (rpc?.type === RPCType.HTTP && route !== UNMATCHED_ROUTE) {
      // The HTTP instrumentation names the span and sets http.route from this when the response ends.
      rpc.route = route;
      rpc.span.updateName(`${method} ${route}`);
    }
    let recorded = false;
    const record = () => {
      if (recorded) return;
      recorded = true;
      // A response never finished (the client went away) is counted with status 499, as nginx does.
      recordHttpRequest(route, method, res.writableFinished ? res.statusCode : 499, startedAt);
    };
    res.once("finish", record);
    res.once("close", record);
    handler(req, res);
  };
}
