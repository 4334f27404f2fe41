import { REPLY_HEADROOM_BYTES, type Bus } from "@sched/bus";
import type { Caller, Meeting, MeetingFilter, MeetingListItem } from "@sched/proto";
import { overriding } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareForList } from "../src/domain/filters.js";
import { client, created, hoursFromNow, inMode, newCaller, startMeetings, type TestMeetings } from "./harness.js";

let h: TestMeetings;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startMeetings();
  api = client(h.bus);
});
afterAll(async () => h?.close());

const ids = (items: { id: string }[]) => items.map((m) => m.id);
const ordered = (direction: "asc" | "desc", items: { id: string; startTime: string }[]) =>
  [...items].sort((a, b) => compareForList(direction, { id: a.id, startTime: new Date(a.startTime) }, { id: b.id, startTime: new Date(b.startTime) }));

async function page(caller: Caller, query: Record<string, string>): Promise<{ data: MeetingListItem[]; hasMore: boolean }> {
  const answer = await api.list(caller, query);
  if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
  return answer.body;
}

/** Walks a whole list page by page, running `between` after each page. */
async function walk(caller: Caller, filter: MeetingFilter, limit: number, between: (last: MeetingListItem) => Promise<void> = async () => {}) {
  const seen: MeetingListItem[] = [];
  let startingAfter: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const p = await page(caller, { filter, limit: String(limit), ...(startingAfter ? { startingAfter } : {}) });
    expect(p.data.length).toBeLessThanOrEqual(limit);
    seen.push(...p.data);
    if (!p.hasMore) return seen;
    expect(p.data).toHaveLength(limit);
    startingAfter = p.data[p.data.length - 1]!.id;
    await between(p.data[p.data.length - 1]!);
  }
  throw new Error("the walk did not end");
}

describe("GET /v1/meetings filters", () => {
  let alice: Caller;
  const made: Record<string, Meeting> = {};

  beforeAll(async () => {
    alice = newCaller();
    const make = async (key: string, body: Record<string, unknown>) => (made[key] = await created(h.bus, alice, body));
    await make("longAgo", { startTime: hoursFromNow(-72) });
    await make("yesterday", { startTime: hoursFromNow(-24), duration: "2 hours" });
    await make("justEnded", { startTime: hoursFromNow(-1), duration: "1 hour" });
    await make("inProgress", { startTime: hoursFromNow(-1), duration: "2 hours" });
    await make("soon", { startTime: hoursFromNow(2) });
    await make("later", { startTime: hoursFromNow(30) });
    await make("draftSoon", { startTime: hoursFromNow(1), status: "draft" });
    await make("draftPast", { startTime: hoursFromNow(-10), status: "draft" });
    await make("cancelled", { startTime: hoursFromNow(5) });
    await api.update(alice, made.cancelled!.id, { status: "cancelled" });
    made.cancelled = (await api.get(alice, made.cancelled!.id)).body;
    await api.update(alice, made.later!.id, { title: "Moved", startTime: hoursFromNow(31), duration: "45 mins", participants: ["new@example.com", "other@example.com"] });
    made.later = (await api.get(alice, made.later!.id)).body;
  });

  it("upcoming (the default) = confirmed and not ended, soonest first", async () => {
    const expected = ["inProgress", "soon", "later"].map((k) => made[k]!.id);
    expect(ids((await page(alice, {})).data)).toEqual(expected);
    expect(ids((await page(alice, { filter: "upcoming" })).data)).toEqual(expected);
  });

  it("past = confirmed and ended, most recent first", async () => {
    expect(ids((await page(alice, { filter: "past" })).data)).toEqual(["justEnded", "yesterday", "longAgo"].map((k) => made[k]!.id));
  });

  it("draft = drafts, ascending", async () => {
    expect(ids((await page(alice, { filter: "draft" })).data)).toEqual(["draftPast", "draftSoon"].map((k) => made[k]!.id));
  });

  it("all = every meeting including cancelled, descending", async () => {
    const all = Object.values(made);
    expect(ids((await page(alice, { filter: "all" })).data)).toEqual(ids(ordered("desc", all)));
  });

  it("list items carry organizer but no description or createdAt", async () => {
    const [item] = (await page(alice, { filter: "all", limit: "1" })).data;
    expect(Object.keys(item!).sort()).toEqual(["duration", "id", "organizer", "originalStartTime", "participants", "recurrence", "seriesId", "startTime", "status", "title"]);
    expect(item!.organizer).toBe(alice.email);
  });

  it("every list item says what GET says of the meeting, field for field", async () => {
    const listed = (await page(alice, { filter: "all" })).data;
    expect(listed).toHaveLength(Object.keys(made).length);
    for (const item of listed) {
      const { description: _d, createdAt: _c, attendees: _a, ...meeting } = (await api.get(alice, item.id)).body;
      expect(item).toEqual(meeting);
    }
  });

  it("a title of quotes, escapes, control characters and emoji is listed as written", async () => {
    const erin = newCaller();
    const title = 'Q4 "plan" \\ back\\slash\ttab\nnew line \u2028 \u00e9t\u00e9 \ud83d\udcc5 </script>';
    const meeting = await created(h.bus, erin, { title, startTime: hoursFromNow(3) });
    const [item] = (await page(erin, {})).data;
    expect(item).toMatchObject({ id: meeting.id, title });
  });

  it("the calendar holds attended meetings: a participant's list shows them, with the organizer", async () => {
    const bob = newCaller();
    const mine = await created(h.bus, bob, { startTime: hoursFromNow(3) });
    const invited = await created(h.bus, alice, { startTime: hoursFromNow(4), participants: [bob.email.toUpperCase()] });
    const list = (await page(bob, {})).data;
    expect(ids(list)).toEqual([mine.id, invited.id]);
    expect(list[1]!.organizer).toBe(alice.email);
    await api.update(alice, invited.id, { status: "cancelled" });
  });

  it("a meeting the caller organizes and attends is listed once", async () => {
    const carol = newCaller();
    const both = await created(h.bus, carol, { startTime: hoursFromNow(3), participants: [carol.email] });
    expect(ids((await page(carol, { filter: "all" })).data)).toEqual([both.id]);
  });

  it("test and live lists are separate", async () => {
    const dave = newCaller();
    const test = await created(h.bus, dave, { startTime: hoursFromNow(3) });
    const live = await created(h.bus, inMode(dave, "live"), { startTime: hoursFromNow(3), participants: [dave.email] });
    expect(ids((await page(dave, { filter: "all" })).data)).toEqual([test.id]);
    expect(ids((await page(inMode(dave, "live"), { filter: "all" })).data)).toEqual([live.id]);
  });

  it.each([
    [{ limit: "abc" }, "limit"],
    [{ limit: "0" }, "limit"],
    [{ limit: "101" }, "limit"],
    [{ limit: ["5", "6"] }, "limit"],
    [{ filter: "soon" }, "filter"],
    [{ filter: ["all", "past"] }, "filter"],
    [{ page: "2" }, "page"],
  ])("query %j is 400 invalid_request naming %s", async (query, param) => {
    const answer = await api.list(alice, query);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: "invalid_request", param });
    expect(answer.body.error.message).toContain(param);
  });
});

describe("GET /v1/meetings limit and hasMore", () => {
  it("the default page is 20; hasMore is true exactly when another page exists", async () => {
    const erin = newCaller();
    for (let i = 0; i < 21; i++) await created(h.bus, erin, { startTime: hoursFromNow(10 + i), status: "draft" });
    const first = await page(erin, { filter: "draft" });
    expect(first.data).toHaveLength(20);
    expect(first.hasMore).toBe(true);
    expect(await page(erin, { filter: "draft", limit: "21" })).toMatchObject({ hasMore: false });
    expect((await page(erin, { filter: "draft", limit: "100" })).data).toHaveLength(21);
    const last = await page(erin, { filter: "draft", limit: "20", startingAfter: first.data[19]!.id });
    expect(last.data).toHaveLength(1);
    expect(last.hasMore).toBe(false);
  });

  it("an empty calendar is an empty page without more", async () => {
    expect(await page(newCaller(), { filter: "all" })).toEqual({ data: [], hasMore: false });
  });
});

describe("GET /v1/meetings pagination", () => {
  it("ties in start time break by id, in the direction of the order", async () => {
    const fay = newCaller();
    const start = hoursFromNow(12);
    const same = [];
    for (let i = 0; i < 6; i++) same.push(await created(h.bus, fay, { startTime: start }));
    expect(ids((await page(fay, { filter: "upcoming" })).data)).toEqual(ids(same).sort());
    expect(ids((await page(fay, { filter: "all" })).data)).toEqual(ids(same).sort().reverse());
    expect(ids(await walk(fay, "upcoming", 4))).toEqual(ids(same).sort());
  });

  it.each(["upcoming", "all", "draft"] as const)(
    "a %s walk sees every meeting once, in order, while meetings are added before and after the cursor",
    async (filter) => {
      const gil = newCaller();
      const status = filter === "draft" ? "draft" : "confirmed";
      const direction = filter === "all" ? "desc" : "asc";
      const original: Meeting[] = [];
      // 15 start times, 3 meetings each: many ties for the id tie-break to order.
      for (let slot = 0; slot < 15; slot++) {
        for (let k = 0; k < 3; k++) original.push(await created(h.bus, gil, { startTime: hoursFromNow(10 + slot), status }));
      }
      const addedBehind: string[] = [];
      const addedAhead: string[] = [];
      const seen = await walk(gil, filter, 7, async (last) => {
        const lastHours = (Date.parse(last.startTime) - Date.now()) / 3_600_000;
        // One meeting the walk has passed (ahead of the cursor in list order is "not yet seen").
        const behindHours = direction === "asc" ? lastHours - 0.25 : lastHours + 0.25;
        // Each addition lies beyond all earlier ones, so none falls behind a cursor on an earlier addition.
        const aheadHours = direction === "asc" ? 40 + addedAhead.length : 2 - addedAhead.length / 10;
        addedBehind.push((await created(h.bus, gil, { startTime: hoursFromNow(behindHours), status })).id);
        addedAhead.push((await created(h.bus, gil, { startTime: hoursFromNow(aheadHours), status })).id);
      });
      const seenIds = ids(seen);
      expect(new Set(seenIds).size).toBe(seenIds.length);
      expect(seenIds.filter((id) => ids(original).includes(id))).toEqual(ids(ordered(direction, original)));
      expect(seenIds.filter((id) => addedBehind.includes(id))).toEqual([]);
      expect(addedAhead.filter((id) => !seenIds.includes(id))).toEqual([]);
      expect(seenIds).toEqual(ids(ordered(direction, seen)));
    },
  );

  it("a past walk pages backwards in time", async () => {
    const hal = newCaller();
    const original: Meeting[] = [];
    for (let i = 0; i < 12; i++) original.push(await created(h.bus, hal, { startTime: hoursFromNow(-100 + i * 3) }));
    expect(ids(await walk(hal, "past", 5))).toEqual(ids(ordered("desc", original)));
  });

  it("startingAfter continues after a meeting the participant attends", async () => {
    const ida = newCaller();
    const organizer = newCaller();
    const theirs = await created(h.bus, organizer, { startTime: hoursFromNow(5), participants: [ida.email] });
    const mine = await created(h.bus, ida, { startTime: hoursFromNow(6) });
    expect(ids((await page(ida, { startingAfter: theirs.id })).data)).toEqual([mine.id]);
  });

  it.each([
    ["a well-formed id that does not exist", "mtg_000000000000000000000000"],
    ["an id of the wrong shape", "not-an-id"],
  ])("startingAfter with %s is 400 invalid_request naming startingAfter", async (_what, id) => {
    const answer = await api.list(newCaller(), { startingAfter: id });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: "invalid_request", param: "startingAfter" });
  });

  it("startingAfter with another user's meeting, or one of the other mode, is 400", async () => {
    const jo = newCaller();
    const other = await created(h.bus, newCaller(), { startTime: hoursFromNow(5) });
    expect((await api.list(jo, { startingAfter: other.id })).body.error.param).toBe("startingAfter");
    const own = await created(h.bus, jo, { startTime: hoursFromNow(5) });
    expect((await api.list(inMode(jo, "live"), { startingAfter: own.id })).body.error.param).toBe("startingAfter");
  });
});

describe("GET /v1/meetings on a bus with a message limit", () => {
  /** List items may take this many bytes a page, past the first item. */
  const ITEM_BYTES = 4_000;
  let small: TestMeetings;

  beforeAll(async () => {
    small = await startMeetings({ bus: (bus) => overriding<Bus>(bus, { maxMessageBytes: () => REPLY_HEADROOM_BYTES + ITEM_BYTES }) });
  });
  afterAll(async () => small?.close());

  const addresses = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `participant-${tag}-${i}-${"x".repeat(40)}@example.com`);
  const itemBytes = (items: MeetingListItem[]) => items.reduce((sum, item) => sum + Buffer.byteLength(JSON.stringify(item)) + 1, 0);

  it("fills a page up to the budget: fewer items than the limit, hasMore, and the walk continues exactly", async () => {
    const kim = newCaller();
    const made: Meeting[] = [];
    for (let i = 0; i < 12; i++) made.push(await created(small.bus, kim, { title: `Weekly ${i} \u00e9t\u00e9`, startTime: hoursFromNow(5 + i), participants: addresses(i === 4 ? 100 : 8, String(i)) }));
    const seen: MeetingListItem[] = [];
    let startingAfter: string | undefined;
    const pageSizes: number[] = [];
    while (pageSizes.length < 20) {
      const answer = await client(small.bus).list(kim, { filter: "all", limit: "100", ...(startingAfter ? { startingAfter } : {}) });
      expect(answer.status).toBe(200);
      const p = answer.body as { data: MeetingListItem[]; hasMore: boolean };
      expect(p.data.length).toBeGreaterThanOrEqual(1);
      // The first item counts whatever its size (the one with 100 addresses is over the budget alone).
      expect(p.data.length === 1 || itemBytes(p.data) <= ITEM_BYTES).toBe(true);
      seen.push(...p.data);
      pageSizes.push(p.data.length);
      if (!p.hasMore) break;
      startingAfter = p.data[p.data.length - 1]!.id;
    }
    expect(ids(seen)).toEqual(ids(ordered("desc", made)));
    expect(pageSizes).toContain(1);
    expect(pageSizes.length).toBeGreaterThanOrEqual(4);
  });

  it("a page the budget holds whole is the page the limit asks for", async () => {
    const lee = newCaller();
    const made: Meeting[] = [];
    for (let i = 0; i < 3; i++) made.push(await created(small.bus, lee, { startTime: hoursFromNow(5 + i) }));
    expect(ids((await client(small.bus).list(lee, { limit: "100" })).body.data)).toEqual(ids(made));
  });
});
