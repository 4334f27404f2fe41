import { AppError } from "@sched/errors";
import type { Logger } from "@sched/logging";
import { JsonText, type Caller } from "@sched/proto";
import {
  extractTraceContext,
  idAttributes,
  injectTraceContext,
  inSpan,
  linkTo,
  now,
  recordBusRequest,
  recordEventConsumed,
  recordEventPublished,
  SpanKind,
  tracingEnabled,
  type Attributes,
  type BusOutcome,
  type Span,
  type SpanOptions,
} from "@sched/telemetry";
import { dispatch, type Served } from "./codec.js";
import type { EndpointBinding, EventMessage, RequestContext, RequestOptions } from "./types.js";

// Every bus operation, on either wiring, in a span and a measurement: the
// trace context travels in the message headers, as W3C traceparent/tracestate.

/** Span attributes of a bus operation: the subject and the caller's ids, never its e-mail address. */
function messagingAttributes(system: "nats" | "memory", subject: string, operation: "send" | "process", caller?: Caller): Attributes {
  return {
    "messaging.system": system,
    "messaging.destination.name": subject,
    "messaging.operation.type": operation,
    ...(caller ? { "enduser.id": caller.userId, "sched.api_key.id": caller.apiKeyId, "sched.mode": caller.mode } : {}),
  };
}

/** How a failed request ends, for metrics: refusals (4xx) are the server doing its job. */
export function outcomeOf(err: unknown): BusOutcome {
  if (err instanceof AppError) return err.status >= 500 ? (err.code === "service_unavailable" ? "unavailable" : "server_error") : "client_error";
  return "server_error";
}

/** Marks a span failed for server-side failures only, and notes the error code either way. */
function spanFailure(err: unknown, span: Span): string | undefined {
  if (!(err instanceof AppError)) return err instanceof Error ? err.name : "Error";
  span.setAttribute("sched.error.code", err.code);
  return err.status >= 500 ? err.code : undefined;
}

/**
 * The ids of a request or reply (`params.id`, `userId`, the body's `id`), as
 * span attributes. A body sent as JSON text is read back for them: only for a
 * recorded span, so without tracing it is never parsed.
 */
function payloadIds(value: unknown): Attributes {
  if (typeof value !== "object" || value === null) return {};
  const v = value as { params?: unknown; body?: unknown };
  const body = v.body instanceof JsonText ? v.body.toJSON() : v.body;
  return { ...idAttributes(value), ...idAttributes(v.params), ...idAttributes(body) };
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Sends one request in a CLIENT span named `<subject> send`, with the trace
 * context added to the headers `send` puts on the wire, and records its
 * duration and outcome. `classify` tells a time-out from a missing responder.
 */
export async function sendRequest<T>(
  system: "nats" | "memory",
  subject: string,
  options: RequestOptions,
  send: (headers: Readonly<Record<string, string>>) => Promise<T>,
  classify: (err: unknown) => BusOutcome = outcomeOf,
): Promise<T> {
  const startedAt = now();
  try {
    // With tracing off there is no span and no trace context to add: the caller's headers go as they are, nothing made for them.
    const reply = tracingEnabled()
      ? await inSpan(`${subject} send`, { kind: SpanKind.CLIENT, attributes: messagingAttributes(system, subject, "send", options.caller), failure: spanFailure }, () =>
          send(injectTraceContext({ ...options.headers })),
        )
      : await send(options.headers ?? NO_HEADERS);
    recordBusRequest("client", subject, "ok", startedAt);
    return reply;
  } catch (err) {
    recordBusRequest("client", subject, classify(err), startedAt);
    throw err;
  }
}

/**
 * Serves one request in a SERVER span named after the subject, continuing the
 * trace the request's headers carry, and records its duration and outcome.
 * `decode` turns the wire bytes into the request (its failure is a 400).
 */
export async function serveRequest(
  system: "nats" | "memory",
  binding: EndpointBinding,
  decode: () => unknown,
  ctx: RequestContext,
  logger: Logger,
): Promise<Served> {
  const subject = binding.endpoint.subject;
  const startedAt = now();
  const tracing = tracingEnabled();
  const attributes = tracing ? messagingAttributes(system, subject, "process", ctx.caller) : undefined;
  try {
    const reply = await inSpan(subject, { kind: SpanKind.SERVER, ...(tracing ? { parent: extractTraceContext(ctx.headers), attributes } : {}), failure: spanFailure }, async (span) => {
      const raw = decode();
      if (tracing) span.setAttributes(payloadIds(raw));
      const result = await dispatch(binding, raw, ctx, logger);
      if (tracing) span.setAttributes(payloadIds(result.reply));
      return result;
    });
    recordBusRequest("server", subject, "ok", startedAt);
    return reply;
  } catch (err) {
    recordBusRequest("server", subject, outcomeOf(err), startedAt);
    throw err;
  }
}

/**
 * Stores one event in a PRODUCER span named `<subject> send`, its trace
 * context in the headers `send` stores with it. Called inside the trace
 * context of the request that caused the event (the outbox restores it), the
 * span joins that request's trace. The message id is left out of the span:
 * its shape is each service's business.
 */
export async function publishEvent(
  system: "nats" | "memory",
  subject: string,
  payload: unknown,
  send: (headers: Record<string, string>) => Promise<void>,
): Promise<void> {
  // Attributes are made only for a span that is recorded: with tracing off, an event pays for none.
  const attributes = tracingEnabled() ? { ...messagingAttributes(system, subject, "send"), ...idAttributes(payload) } : undefined;
  try {
    await inSpan(`${subject} send`, { kind: SpanKind.PRODUCER, ...(attributes ? { attributes } : {}) }, () => send(injectTraceContext({})));
    recordEventPublished(subject, true);
  } catch (err) {
    recordEventPublished(subject, false);
    throw err;
  }
}

/**
 * Runs an event handler in a CONSUMER span named after the subject, as a child
 * of the span that published the event (whose context the message carries),
 * so the work an event causes joins the trace of the request that caused it.
 * Records the handling time and outcome; a handler's error is rethrown for
 * the caller to settle the message.
 */
export async function consumeEvent<M extends EventMessage>(
  system: "nats" | "memory",
  durable: string,
  message: M,
  lastAttempt: boolean,
  handler: (message: M) => Promise<void>,
): Promise<void> {
  const startedAt = now();
  try {
    await inSpan(message.subject, consumerSpan(system, durable, message, () => ({ ...idAttributes(message.payload) })), () => handler(message));
    recordEventConsumed(message.subject, "ack", startedAt);
  } catch (err) {
    recordEventConsumed(message.subject, lastAttempt ? "given_up" : "retry", startedAt);
    throw err;
  }
}

/**
 * The CONSUMER span of handling `message` (the first of a batch): a child of
 * the span that published it, with `more` attributes. With tracing off the
 * span is not recorded, and neither its parent nor its attributes are made:
 * reading the parent decodes the event's headers.
 */
function consumerSpan(system: "nats" | "memory", durable: string, message: EventMessage, more: () => Attributes): SpanOptions {
  if (!tracingEnabled()) return { kind: SpanKind.CONSUMER };
  const attributes: Attributes = {
    ...messagingAttributes(system, message.subject, "process"),
    "messaging.consumer.group.name": durable,
    "messaging.message.delivery_count": message.deliveryCount,
    ...more(),
  };
  return { kind: SpanKind.CONSUMER, parent: extractTraceContext(message.headers), attributes };
}

/**
 * Hands a batch of delivered events to `handler` in one CONSUMER span that
 * continues the first event's trace and links the producers of the others
 * (as OpenTelemetry's messaging conventions do for a batch), and records
 * each event's outcome.
 */
export async function consumeEvents<M extends EventMessage>(
  system: "nats" | "memory",
  durable: string,
  messages: M[],
  handler: (messages: M[]) => Promise<void>,
): Promise<void> {
  const startedAt = now();
  const first = messages[0]!;
  const batch = consumerSpan(system, durable, first, () => ({ "messaging.batch.message_count": messages.length }));
  // The producers of the others, linked only on a span that is recorded: each link reads an event's headers.
  if (tracingEnabled()) batch.links = messages.slice(1).flatMap((m) => linkTo(m.headers) ?? []);
  try {
    await inSpan(first.subject, batch, () => handler(messages));
    for (const m of messages) recordEventConsumed(m.subject, "ack", startedAt);
  } catch (err) {
    for (const m of messages) recordEventConsumed(m.subject, "retry", startedAt);
    throw err;
  }
}

/**
 * Sends a notice in a PRODUCER span named `<subject> send`, its trace context
 * in the headers `send` puts on the wire, so what each receiver does joins the
 * trace of what caused the notice (a key revoked through the admin API, say).
 */
export async function sendNotice(system: "nats" | "memory", subject: string, payload: unknown, send: (headers: Record<string, string>) => void): Promise<void> {
  const attributes = { ...messagingAttributes(system, subject, "send"), ...idAttributes(payload) };
  await inSpan(`${subject} send`, { kind: SpanKind.PRODUCER, attributes }, async () => send(injectTraceContext({})));
}

/**
 * Runs a notice handler in a CONSUMER span named after the subject, a child of
 * the sender's span. A notice is nobody's to retry: a failing handler is
 * logged and its span marked failed.
 */
export function receiveNotice(system: "nats" | "memory", subject: string, payload: unknown, headers: Readonly<Record<string, string>>, handler: () => void, logger: Logger): void {
  const attributes = { ...messagingAttributes(system, subject, "process"), ...idAttributes(payload) };
  inSpan(subject, { kind: SpanKind.CONSUMER, parent: extractTraceContext(headers), attributes }, async () => handler()).catch((err: unknown) => {
    logger.warn({ err, subject }, "notice handler failed");
  });
}
