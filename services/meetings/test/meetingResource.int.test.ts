import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findMeeting, findMeetingResource } from "../src/db/queries.js";
import { toMeeting } from "../src/domain/meeting.js";
import { client, created, hoursFromNow, newCaller, recordAnswer, startMeetings, type TestMeetings } from "./harness.js";

/** Texts JSON must escape, or that are easy to get wrong: quotes, backslashes, control characters, line breaks, characters beyond ASCII. */
const AWKWARD = ['He said "hi" \\ left', "tab\there\nnew line\r\u0001\u001f\u007f", "Zoë 🎉 日本語 \u2028\u2029", ""];

/** The get's JSON text, written by Postgres, is what the service would write from the record: byte for byte, on both databases. */
describe.each(["postgres", "pglite"] as const)("a meeting as GET answers it, on %s", (target) => {
  let h: TestMeetings;
  beforeAll(async () => {
    h = await startMeetings({ target });
  }, 60_000);
  afterAll(async () => h?.close());

  const expectSameText = async (id: string) => {
    const record = await findMeeting(h.db, id, "test");
    const resource = await findMeetingResource(h.db, id, "test");
    expect(resource?.json).toBe(JSON.stringify(toMeeting(record!)));
    expect(resource).toMatchObject({ mode: record!.mode, organizerId: record!.organizerId, participants: record!.participants });
  };

  it("with awkward texts, no answers", async () => {
    const alice = newCaller();
    for (const text of AWKWARD) {
      const answer = await client(h.bus).create(alice, { title: text || "x", description: text, duration: "45 mins", startTime: hoursFromNow(3), participants: ["b@example.com", "a@example.com"] });
      expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 201 });
      await expectSameText(answer.body.id);
    }
  });

  it("with answers given, in the participants' order", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(5), participants: ["z@example.com", "m@example.com", "a@example.com", "q@example.com"] });
    await recordAnswer(h.bus, alice, meeting.id, "m@example.com", "accepted", "2026-05-04T09:30:12Z");
    await recordAnswer(h.bus, alice, meeting.id, "a@example.com", "declined", "2026-05-04T10:00:00Z");
    await recordAnswer(h.bus, alice, meeting.id, "z@example.com", "tentative", "2026-05-04T11:00:00Z");
    await expectSameText(meeting.id);
    const fetched = await client(h.bus).get(alice, meeting.id);
    expect(fetched.body.attendees).toEqual([
      { email: "z@example.com", response: "tentative", respondedAt: "2026-05-04T11:00:00Z" },
      { email: "m@example.com", response: "accepted", respondedAt: "2026-05-04T09:30:12Z" },
      { email: "a@example.com", response: "declined", respondedAt: "2026-05-04T10:00:00Z" },
      { email: "q@example.com", response: "needsAction", respondedAt: null },
    ]);
  });

  it("of another mode, or unknown, is not found", async () => {
    const alice = newCaller();
    const meeting = await created(h.bus, alice, { startTime: hoursFromNow(6) });
    expect(await findMeetingResource(h.db, meeting.id, "live")).toBeUndefined();
    expect(await findMeetingResource(h.db, `${meeting.id}x`, "test")).toBeUndefined();
  });
});
