import { HttpReply, JsonText } from "@sched/proto";
import { expect, it } from "vitest";
import { checkedHttpReply, decodeHttpReply, encodeHttpReply } from "../src/httpReply.js";

const body = { id: "m1", title: "Standup" };
const replies: unknown[] = [
  { status: 200 },
  { status: 200, body },
  { status: 200, body: undefined },
  { status: 201, body: new JsonText('{"id":"m1"}'), headers: { Location: "/v1/meetings/m1" } },
  { status: 204, headers: undefined },
  { status: 303, headers: { Location: "/elsewhere" }, extra: "left out" },
  { status: 399, body: null },
  { status: 199 },
  { status: 400, body },
  { status: 200.5 },
  { status: "200" },
  { status: Number.NaN },
  { status: 200, headers: { "X-Count": 3 } },
  { status: 200, headers: ["a"] },
  { status: 200, headers: null },
  { body },
  [],
  null,
  "200",
];

it("checks a route's reply by hand exactly as the HttpReply schema does, giving back what the schema gives", () => {
  for (const reply of replies) {
    const parsed = HttpReply.safeParse(reply);
    const checked = checkedHttpReply(reply);
    expect(checked, JSON.stringify(reply)).toEqual(parsed.success ? parsed.data : undefined);
    if (checked) expect(Object.keys(checked), JSON.stringify(reply)).toEqual(Object.keys(parsed.data!));
    if (checked && "body" in checked) expect(checked.body).toBe((reply as { body: unknown }).body);
  }
});

it("reads a reply's head as it was sent, a status alone read once and handed out as a fresh reply each time", () => {
  const ok = encodeHttpReply({ status: 200, body: { id: "m1" } });
  const first = decodeHttpReply(ok, true);
  const second = decodeHttpReply(ok, false);
  expect(first).toEqual({ status: 200, body: new JsonText('{"id":"m1"}') });
  expect(second).toEqual({ status: 200, body: { id: "m1" } });
  const noContent = encodeHttpReply({ status: 204 });
  const empty = decodeHttpReply(noContent, true);
  expect(empty).toEqual({ status: 204 });
  expect(decodeHttpReply(noContent, true)).not.toBe(empty);
  empty.status = 500;
  expect(decodeHttpReply(noContent, true)).toEqual({ status: 204 });
  const created = encodeHttpReply({ status: 201, body: { id: "m2" }, headers: { Location: "/v1/meetings/m2" } });
  expect(decodeHttpReply(created, false)).toEqual({ status: 201, body: { id: "m2" }, headers: { Location: "/v1/meetings/m2" } });
  expect(decodeHttpReply({ head: '{"status":201,"headers":{"Location":"/v1/meetings/m3"}}', body: "" }, true)).toEqual({ status: 201, headers: { Location: "/v1/meetings/m3" } });
  expect(() => decodeHttpReply({ head: "", body: "{}" }, true)).toThrow(/without its status/);
  expect(() => decodeHttpReply({ head: '{"status":200,"body":1}', body: "" }, true)).toThrow(/without its status/);
});
