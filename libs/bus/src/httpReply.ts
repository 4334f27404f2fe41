import { JsonText, type HttpReply } from "@sched/proto";

/**
 * A requester that reads HTTP replies split (status and headers in
 * HTTP_REPLY_HEADER, the body alone as the payload) says so in this header.
 * A responder splits only when asked, and a requester reads either form, so
 * gateways and services of both releases work together during a rolling
 * upgrade.
 */
export const SPLIT_REPLY_HEADER = "Sched-Reply-Form";
export const SPLIT_REPLY = "split";
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
  const head = JSON.parse(wire.head) as Omit<HttpReply, "body">;
  if (wire.body.length === 0) return head;
  const body = new JsonText(wire.body);
  return { ...head, body: encodedBody ? body : body.toJSON() };
}
