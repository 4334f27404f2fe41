import { HttpReply, JsonText } from "@sched/proto";
import { expect, it } from "vitest";
import { checkedHttpReply } from "../src/httpReply.js";

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
