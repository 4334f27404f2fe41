import { JsonText, type HttpReply } from "@sched/proto";

/**
 * An HTTP route's reply crosses the bus split: its status and headers as
 * JSON in this header, its body's JSON text alone as the payload, so a body
 * a service already holds as JSON text (a JsonText) is never parsed or
 * encoded again on the way to the client.
 */
export const HTTP_REPLY_HEADER = "Sched-Http-Reply";

/** An HTTP reply as it travels: its status and headers, and its body's JSON text (empty when there is none). */
export interface WireHttpReply {
  head: string;
  body: string | Uint8Array;
}

/** Encodes the body once, or not at all when it is a JsonText. */
export function encodeHttpReply(reply: HttpReply): WireHttpReply {
  const { body, ...head } = reply;
  return { head: JSON.stringify(head), body: body === undefined ? "" : body instanceof JsonText ? body.encoded : JSON.stringify(body) };
}

/**
 * The reply again; with `encodedBody` its body stays the JSON the service
 * sent, as a JsonText, for a gateway to pass on untouched.
 */
export function decodeHttpReply(wire: WireHttpReply, encodedBody: boolean): HttpReply {
  if (wire.head === "") throw new Error("an HTTP route's reply came without its status and headers");
  const head = JSON.parse(wire.head) as Omit<HttpReply, "body">;
  if (wire.body.length === 0) return head;
  const body = new JsonText(wire.body);
  return { ...head, body: encodedBody ? body : body.toJSON() };
}
