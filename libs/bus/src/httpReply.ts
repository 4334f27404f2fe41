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
 * The reply again, its head checked as an HttpReply's; with `encodedBody` its
 * body stays the JSON the service sent, as a JsonText, for a gateway to pass
 * on untouched.
 */
export function decodeHttpReply(wire: WireHttpReply, encodedBody: boolean): HttpReply {
  const head = readHead(wire.head);
  if (!head || "body" in head) throw new Error("an HTTP route's reply came without its status and headers");
  if (wire.body.length === 0) return { ...head };
  const body = new JsonText(wire.body);
  return { ...head, body: encodedBody ? body : body.toJSON() };
}

/**
 * Heads of a status alone (`{"status":200}`, nearly every reply), read once
 * each and kept by their text: a head's parse and check made five objects a
 * reply. Heads with headers (a Location naming a new id) are read each time.
 * A kept head is never handed out: every reply is a copy of it.
 */
const statusHeads = new Map<string, HttpReply>();
/** More than the statuses routes answer with: a service of another release adds a few at most. */
const STATUS_HEADS_KEPT = 64;

function readHead(text: string): HttpReply | undefined {
  const known = statusHeads.get(text);
  if (known) return known;
  const head = text === "" ? undefined : checkedHttpReply(JSON.parse(text));
  if (head && !("headers" in head) && !("body" in head) && statusHeads.size < STATUS_HEADS_KEPT) statusHeads.set(text, head);
  return head;
}

/**
 * A handler's reply as the HttpReply schema gives it back (its keys, unknown
 * ones left out; the body as it is), checked by hand: zod's walk of it was a
 * measurable part of serving a request. Undefined when it does not match;
 * the schema then says why.
 */
export function checkedHttpReply(value: unknown): HttpReply | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { status, body, headers } = value as { status?: unknown; body?: unknown; headers?: unknown };
  if (typeof status !== "number" || !Number.isInteger(status) || status < 200 || status > 399) return undefined;
  if (headers !== undefined && !isStringRecord(headers)) return undefined;
  return { status, ...("body" in value ? { body } : {}), ...("headers" in value ? { headers } : {}) };
}

function isStringRecord(value: unknown): value is Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  for (const field of Object.values(value)) if (typeof field !== "string") return false;
  return true;
}
