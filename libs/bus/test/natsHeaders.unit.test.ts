import { headers as natsHeaders, MsgHdrsImpl, type MsgHdrs } from "@nats-io/nats-core";
import { expect, it } from "vitest";
import { ENCODED_HEADERS, headerText, headerValues } from "../src/headerText.js";
import { headerOf, putHeader, toNatsHeaders } from "../src/natsHeaders.js";

const wire = (h: MsgHdrsImpl) => Buffer.from(h.encode()).toString();
/** The client's own headers made with `set`, in this order. */
const clientHeaders = (entries: Array<[string, string]>) => {
  const h = natsHeaders();
  for (const [name, value] of entries) h.set(name, value);
  return h as MsgHdrsImpl;
};

it("makes the headers the client's own `set` would, byte for byte, values sent as JSON listed last", () => {
  const sent = { "Idempotency-Key": "k-1", traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: " spaced ", Note: "line\r\nbreak" };
  const h = toNatsHeaders(sent);
  const expected = clientHeaders([
    ["Idempotency-Key", "k-1"],
    ["traceparent", sent.traceparent],
    ["tracestate", headerText(" spaced ")],
    ["Note", headerText("line\r\nbreak")],
    [ENCODED_HEADERS, "tracestate,Note"],
  ]);
  expect(wire(h)).toBe(wire(expected));
  expect(h.equals(expected)).toBe(true);
  expect(headerValues(MsgHdrsImpl.decode(h.encode()))).toEqual(sent);
  expect(wire(toNatsHeaders({}))).toBe(wire(clientHeaders([])));
});

it("puts a header as `set` does: a name put again replaced and moved last, a name the client refuses refused by it", () => {
  const h = toNatsHeaders({ "Sched-Caller": "old", Other: "o" });
  putHeader(h, "Sched-Caller", "new");
  putHeader(h, "Sched-Deadline", "1764183000000");
  expect(wire(h)).toBe(wire(clientHeaders([["Sched-Caller", "old"], ["Other", "o"], ["Sched-Caller", "new"], ["Sched-Deadline", "1764183000000"]])));
  for (const name of ["Bad Name", "Bad:Name", "Bad\u00e9"]) {
    expect(() => putHeader(new MsgHdrsImpl(), name, "v")).toThrow(/not a valid character in a header name/);
    expect(() => natsHeaders().set(name, "v")).toThrow(/not a valid character in a header name/);
  }
});

it("reads a header's first value as `get` does, from a received message's headers or any other", () => {
  const received = MsgHdrsImpl.decode(new TextEncoder().encode('NATS/1.0\r\nSched-Http-Reply: {"status":200}\r\nNats-Service-Error-Code: 404\r\nTwice: a\r\nTwice: b\r\n\r\n'));
  // Headers of another class (another copy of the client, say): read through their own `get`.
  const other: MsgHdrs = clientHeaders([["Sched-Http-Reply", "{}"]]);
  Object.setPrototypeOf(other, { get: MsgHdrsImpl.prototype.get, findKeys: MsgHdrsImpl.prototype.findKeys, keys: MsgHdrsImpl.prototype.keys });
  expect(other).not.toBeInstanceOf(MsgHdrsImpl);
  for (const name of ["Sched-Http-Reply", "Nats-Service-Error-Code", "Twice", "sched-http-reply", "Absent"]) expect(headerOf(received, name)).toBe(received.get(name));
  expect(headerOf(other, "Sched-Http-Reply")).toBe("{}");
  expect(headerOf(other, "Absent")).toBe("");
  expect(headerOf(undefined, "Sched-Http-Reply")).toBe("");
});
