import { expect, it } from "vitest";
import type { StoredEvent } from "../src/index.js";
import { RecentEvents } from "../src/recentEvents.js";

const placed = new Set(["orders.placed"]);
const event = (streamSequence: number, subject = "orders.placed"): StoredEvent => ({ streamSequence, subject, payload: { n: streamSequence }, headers: {} });
const positions = (events: StoredEvent[] | undefined) => events?.map((e) => e.streamSequence);

it("answers only past the first append it saw, and never past an append whose transaction has not ended", () => {
  const recent = new RecentEvents();
  expect(recent.read(0, placed, 10)).toBeUndefined();
  recent.appended(5);
  recent.appended(6);
  // Before the memory starts: the log is read.
  expect(recent.read(3, placed, 10)).toBeUndefined();
  expect(positions(recent.read(4, placed, 10))).toEqual([]);
  // 6's transaction ended first: it stays hidden behind 5, which may yet be kept.
  recent.ended(event(6), "kept");
  expect(positions(recent.read(4, placed, 10))).toEqual([]);
  recent.ended(event(5), "kept");
  expect(positions(recent.read(4, placed, 10))).toEqual([5, 6]);
  expect(positions(recent.read(5, placed, 1))).toEqual([6]);
  expect(positions(recent.read(4, new Set(["orders.shipped"]), 10))).toEqual([]);
});

it("forgets an undone event, and everything when an end is not known", () => {
  const recent = new RecentEvents();
  recent.appended(1);
  recent.ended(event(1), "kept");
  recent.appended(2);
  recent.ended(event(2), "undone");
  recent.appended(3);
  recent.ended(event(3), "kept");
  expect(positions(recent.read(0, placed, 10))).toEqual([1, 3]);
  recent.appended(4);
  recent.ended(event(4), "unknown");
  expect(recent.read(3, placed, 10)).toBeUndefined();
  // An event appended before the memory was forgotten ends unseen; the next append starts it again.
  recent.appended(5);
  recent.ended(event(5), "kept");
  expect(recent.read(3, placed, 10)).toBeUndefined();
  expect(positions(recent.read(4, placed, 10))).toEqual([5]);
});
