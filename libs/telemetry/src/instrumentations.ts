import type { Attributes } from "@opentelemetry/api";
import type { Instrumentation } from "@opentelemetry/instrumentation";
import { ExpressInstrumentation } from "@opentelemetry/instrumentation-express";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import type { IncomingMessage } from "node:http";

/** Probe and scrape paths: answered many times a minute, never worth a trace. */
const UNTRACED_PATHS = new Set(["/livez", "/readyz", "/healthz", "/metrics"]);

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? "";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** Query values may hold anything a client typed (an e-mail address in a search): only the names stay. */
export function redactedQuery(url: string | undefined): Attributes {
  const q = url?.indexOf("?") ?? -1;
  if (!url || q === -1) return {};
  const params = new URLSearchParams(url.slice(q + 1));
  const names = [...new Set(params.keys())];
  return { "url.query": names.map((n) => `${encodeURIComponent(n)}=REDACTED`).join("&") };
}

/**
 * HTTP (the gateway's server span), express (its middleware) and pg (each SQL
 * statement, without values). SQL spans are only made inside a traced
 * request, so background polling leaves no traces of its own.
 */
export function createInstrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has(pathOf(req)),
      startIncomingSpanHook: (req) => redactedQuery(req.url),
      applyCustomAttributesOnSpan: (span, _req, res) => {
        // The gateway's request id (a sanitised token), to go from a client's report to its trace.
        const requestId = "getHeader" in res ? res.getHeader("x-request-id") : undefined;
        if (typeof requestId === "string") span.setAttribute("sched.request.id", requestId);
      },
    }),
    new ExpressInstrumentation(),
    new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
  ];
}
