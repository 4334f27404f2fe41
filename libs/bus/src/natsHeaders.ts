import { MsgHdrsImpl, type MsgHdrs } from "@nats-io/nats-core";
import { encodeHeadersInto } from "./headerText.js";

/*
 * NATS headers made and read through the client's own map (MsgHdrsImpl's
 * `headers`, public and typed), where its `set` and `get` cost most: every
 * request the bus sends and every reply it reads goes through here.
 */

/** The headers of a message the bus sends, as the client's `headers()` and `set` would make them. */
export function toNatsHeaders(headers: Readonly<Record<string, string>>): MsgHdrsImpl {
  const h = new MsgHdrsImpl();
  encodeHeadersInto(headers, h, putHeader);
  return h;
}

/** A header name as the client takes it: printable ASCII but the colon. */
const HEADER_NAME = /^[!-9;-~]+$/;

/**
 * `h.set(name, value)` for a value that travels as it is (see headerText:
 * no CR or LF, nothing to trim), written to the client's map directly. The
 * client's `set` lists and filters every name twice and copies the new one
 * character by character to check it: 2 of the 3.5 KB a get's headers cost
 * (docs/benchmarks.md). A name it would refuse still goes to it, to be
 * refused as before.
 */
export function putHeader(h: MsgHdrsImpl, name: string, value: string): void {
  if (!HEADER_NAME.test(name)) return h.set(name, value);
  h.headers.delete(name);
  h.headers.set(name, [value]);
}

/** A header's first value, or "" (as MsgHdrs.get), read from the client's map when it is one: `get` lists and filters every name. */
export function headerOf(h: MsgHdrs | undefined, name: string): string {
  if (h instanceof MsgHdrsImpl) return h.headers.get(name)?.[0] ?? "";
  return h?.get(name) ?? "";
}
