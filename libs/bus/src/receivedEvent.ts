import type { z } from "zod";
import type { EventDef } from "@sched/proto";
import type { EventMessage, EventMessageOf } from "./types.js";

/** What the bus knows of one delivery besides the event's declaration and payload. */
type Delivery = Omit<EventMessage, "subject" | "payload">;

/**
 * The message of one stored event of `event`, its payload parsed by the
 * declaration's schema (throwing when it fails the contract): the one place
 * a consumer's message gets its declaration's type.
 */
export function receivedEvent<E extends EventDef>(event: E, payload: unknown, delivery: Delivery): EventMessageOf<E> {
  // Each field named rather than spread: a spread copies by a slower path, on every event.
  const { deliveryCount, streamSequence, follows, headers } = delivery;
  const message: EventMessage<E> = { subject: event.subject, payload: parsed<E["payload"]>(event.payload, payload), deliveryCount, streamSequence, follows, headers };
  // Built from its declaration, the message is that declaration's member of the union.
  return message as EventMessageOf<E>;
}

/**
 * As receivedEvent, but the headers are read (`readHeaders`, once) only when
 * someone asks for them: a JetStream event's headers are decoded from the
 * wire, and most consumers with tracing off never look at them.
 */
export function receivedEventReadingHeaders<E extends EventDef>(
  event: E,
  payload: unknown,
  delivery: Omit<Delivery, "headers">,
  readHeaders: () => Readonly<Record<string, string>>,
): EventMessageOf<E> {
  const { deliveryCount, streamSequence, follows } = delivery;
  let headers: Readonly<Record<string, string>> | undefined;
  const message: EventMessage<E> = {
    subject: event.subject,
    payload: parsed<E["payload"]>(event.payload, payload),
    deliveryCount,
    streamSequence,
    follows,
    // An own, enumerable property as receivedEvent's: a copy of the message (a spread) holds the headers too.
    get headers() {
      return (headers ??= readHeaders());
    },
  };
  return message as EventMessageOf<E>;
}

/** `schema.parse`, typed by the schema's own type: on a generic declaration's member zod's method gives only `unknown` (as parsedBy). */
function parsed<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  return schema.parse(value);
}
