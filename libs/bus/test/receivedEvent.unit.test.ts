import { eventDef } from "@sched/proto";
import { expect, it } from "vitest";
import { z } from "zod";
import { receivedEventReadingHeaders } from "../src/receivedEvent.js";

const placed = eventDef({ name: "ORDERS", subjectPrefix: "orders.v1.events" }, "placed", z.object({ n: z.number(), note: z.string().default("") }));

it("reads an event's headers only when asked, and once", () => {
  let reads = 0;
  const readHeaders = () => {
    reads += 1;
    return { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
  };
  const message = receivedEventReadingHeaders(placed, { n: 1 }, { deliveryCount: 1, streamSequence: 4, follows: 3 }, readHeaders);
  expect(reads).toBe(0);
  expect(message).toMatchObject({ subject: placed.subject, payload: { n: 1, note: "" }, deliveryCount: 1, streamSequence: 4, follows: 3 });
  expect(message.headers.traceparent).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  expect(message.headers).toBe(message.headers);
  expect(reads).toBe(1);
  // A copy of the message carries the headers as a value.
  expect({ ...message }.headers).toEqual(readHeaders());
});

it("refuses a payload that fails its declaration's schema before reading anything else", () => {
  let reads = 0;
  expect(() => receivedEventReadingHeaders(placed, { n: "one" }, { deliveryCount: 1, streamSequence: 1, follows: undefined }, () => ({ read: String(++reads) }))).toThrow();
  expect(reads).toBe(0);
});
