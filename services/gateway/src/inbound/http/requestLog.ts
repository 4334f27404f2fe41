import type { ServedRequest } from "@sched/proto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isoTimestamp } from "../../domain/isoTimestamp.js";
import { known } from "./requestFacts.js";

/** Where a request's metadata goes once it is answered. */
export interface RequestLogSink {
  record(request: ServedRequest): void;
}

/**
 * Records each request a key was resolved for (errors and 429s included)
 * when its answer is sent: time, key, method, the route's template, status,
 * duration and request id. The route handler names the route and the caller
 * (requestFacts.ts); requests without a key are not anyone's to see.
 */
export function servedRequestRecorder(sink: RequestLogSink): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const arrivedAt = Date.now();
    const started = performance.now();
    // "finish" comes once: no wrapper to drop the listener after it.
    res.on("finish", () => {
      const { caller, routePath, requestId } = known(res);
      if (!caller || !routePath) return;
      sink.record({
        at: isoTimestamp(arrivedAt),
        requestId: String(requestId),
        apiKeyId: caller.apiKeyId,
        userId: caller.userId,
        mode: caller.mode,
        method: req.method!,
        path: routePath,
        status: res.statusCode,
        durationMs: Math.round(performance.now() - started),
      });
    });
  };
}
