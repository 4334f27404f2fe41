import { headers as natsHeaders, type MsgHdrs } from "@nats-io/nats-core";
import { expect, it } from "vitest";
import { encodeHttpReply, HTTP_REPLY_HEADER } from "../src/httpReply.js";
import { replyHeadHeaders } from "../src/replyHeads.js";

const wire = (h: MsgHdrs) => Buffer.from((h as MsgHdrs & { encode(): Uint8Array }).encode()).toString();
/** The bytes the client sends for headers of its own made of these, in this order. */
const clientWire = (entries: Array<[string, string]>) => {
  const h = natsHeaders();
  for (const [name, value] of entries) h.set(name, value);
  return wire(h);
};

it("sends a reply head of a status alone as the same shared headers, byte for byte what the client's own would be", () => {
  const ok = encodeHttpReply({ status: 200, body: { id: "m1" } }).head;
  const noContent = encodeHttpReply({ status: 204 }).head;
  expect(replyHeadHeaders(ok, true)).toBe(replyHeadHeaders(ok, true));
  expect(wire(replyHeadHeaders(ok, true))).toBe(clientWire([[HTTP_REPLY_HEADER, ok]]));
  // Encoded on the first reply, handed out as they are on the next.
  expect(wire(replyHeadHeaders(ok, true))).toBe(clientWire([[HTTP_REPLY_HEADER, ok]]));
  expect(wire(replyHeadHeaders(noContent, true))).toBe(clientWire([[HTTP_REPLY_HEADER, '{"status":204}']]));
});

it("makes the headers of a head with headers of its own for its reply alone", () => {
  const created = encodeHttpReply({ status: 201, body: { id: "m1" }, headers: { Location: "/v1/meetings/m1" } }).head;
  const first = replyHeadHeaders(created, false);
  expect(first).not.toBe(replyHeadHeaders(created, false));
  expect(wire(first)).toBe(clientWire([[HTTP_REPLY_HEADER, created]]));
});
