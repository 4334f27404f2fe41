import type { Caller, ServedRequest } from "@sched/proto";
import type express from "express";

/** Where a request's metadata goes once it is answered. */
export interface RequestLogSink {
  record(request: ServedRequest): void;
}

/**
 * Records each request a key was resolved for (errors and 429s included)
 * when its answer is sent: time, key, method, the route's template, status,
 * duration and request id. The route handler names the route and the caller
 * in `res.locals`; requests without a key are not anyone's to see.
 */
export function recordServedRequests(sink: RequestLogSink): express.RequestHandler {
  return (req, res, next) => {
    const arrivedAt = Date.now();
    const started = performance.now();
    res.once("finish", () => {
      const caller = res.locals.caller as Caller | undefined;
      const routePath = res.locals.routePath as string | undefined;
      if (!caller || !routePath) return;
      sink.record({
        at: new Date(arrivedAt).toISOString(),
        requestId: String(res.locals.requestId),
        apiKeyId: caller.apiKeyId,
        userId: caller.userId,
        mode: caller.mode,
        method: req.method,
        path: routePath,
        status: res.statusCode,
        durationMs: Math.round(performance.now() - started),
      });
    });
    next();
  };
}
