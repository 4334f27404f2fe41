import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from "@opentelemetry/api";
import { tracingEnabled } from "./sdk.js";

export { SpanKind };
export type { Attributes, Context, Span };

/** W3C trace context as text: `traceparent` and, when present, `tracestate`. */
export type TraceCarrier = Record<string, string>;

const tracer = () => trace.getTracer("@sched/telemetry");
const NOT_RECORDING = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** Writes the active (or given) trace context into a carrier: message headers, an outbox row. */
export function injectTraceContext(carrier: TraceCarrier = {}, ctx: Context = context.active()): TraceCarrier {
  propagation.inject(ctx, carrier);
  return carrier;
}

/**
 * The trace context a carrier holds, on an empty context: a span made under
 * it continues the sender's trace and never the receiver's ambient one.
 */
export function extractTraceContext(carrier: Readonly<Record<string, string>> | null | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}

/** The active trace context as a carrier to store (with an event), or undefined outside a trace. */
export function currentTraceContext(): TraceCarrier | undefined {
  if (!tracingEnabled()) return undefined;
  const carrier = injectTraceContext({});
  return carrier.traceparent ? carrier : undefined;
}

/** Just the trace context among a message's headers, as a carrier to store; undefined when they hold none. */
export function traceContextIn(headers: Readonly<Record<string, string>> | null | undefined): TraceCarrier | undefined {
  if (!headers || !tracingEnabled()) return undefined;
  const carrier = injectTraceContext({}, extractTraceContext(headers));
  return carrier.traceparent ? carrier : undefined;
}

/** Runs `fn` in the trace context a carrier holds (e.g. to publish an event as part of the request that caused it). */
export function withTraceContext<T>(carrier: Readonly<Record<string, string>> | null | undefined, fn: () => T): T {
  if (!carrier || !tracingEnabled()) return fn();
  return context.with(extractTraceContext(carrier), fn);
}

/** A link to the span a carrier names (e.g. the producer of one event of a batch), or undefined when it names none. */
export function linkTo(carrier: Readonly<Record<string, string>> | null | undefined): Link | undefined {
  const spanContext = trace.getSpanContext(extractTraceContext(carrier));
  return spanContext && trace.isSpanContextValid(spanContext) ? { context: spanContext } : undefined;
}

export interface SpanOptions {
  kind: SpanKind;
  attributes?: Attributes;
  /** The parent; by default the active context. */
  parent?: Context;
  links?: Link[];
  /**
   * What a thrown error says about the operation: an `error.type` marks the
   * span failed, undefined leaves it ok (a refused request is the server
   * working). By default every error fails the span, typed by its name.
   */
  failure?: (err: unknown, span: Span) => string | undefined;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : "Error";
}

/** Marks a span failed. Only a type is recorded: messages can carry user data. */
export function markSpanFailed(span: Span, errorType: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Runs `fn` in a new active span that ends when `fn` settles. With tracing
 * off it costs one flag check: `fn`'s own promise is handed back, with no
 * async wrapper of its own (each would add a promise and the turns of the
 * microtask queue that settle it to every request served and sent).
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  if (tracingEnabled()) return inRecordedSpan(name, options, fn);
  try {
    return fn(NOT_RECORDING);
  } catch (err) {
    // As an async function would: a `fn` that throws before its first await still rejects.
    return Promise.reject(err as Error);
  }
}

async function inRecordedSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind, ...(options.attributes ? { attributes: options.attributes } : {}), ...(options.links ? { links: options.links } : {}) },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    const type = (options.failure ?? errorName)(err, span);
    if (type !== undefined) markSpanFailed(span, type);
    throw err;
  } finally {
    span.end();
  }
}

/** Sets attributes on the active span (no-op outside one). */
export function setActiveSpanAttributes(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** Public ids (`mtg_…`, `usr_…`, `evt_…`): never an e-mail address or an API key (`sk_live_…`). */
const ID_SHAPE = /^[a-z]{3,4}_[0-9A-Za-z]{8,64}$/;

/**
 * Span attributes for the ids among an object's top-level fields: `id` →
 * `sched.id`, `meetingId` → `sched.meeting.id`. Other fields, and anything not
 * shaped like an id, are left out, so bodies never reach a span.
 */
export function idAttributes(value: unknown): Attributes {
  const out: Attributes = {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) return out;
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== "string" || !ID_SHAPE.test(v)) continue;
    if (key === "id") out["sched.id"] = v;
    else if (key.endsWith("Id") && key.length > 2) out[`sched.${snake(key.slice(0, -2))}.id`] = v;
  }
  return out;
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
