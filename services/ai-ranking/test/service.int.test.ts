import { aiRankingRank } from "@sched/proto";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNewGeneration } from "../src/db/queries.js";
import { AiRankingHarness, makePerson } from "./harness.js";
import { DAY, HOUR, MONDAY, NEXT_WEEK, NOW, slot } from "./people.js";

describe("ai-ranking over the bus", () => {
  let h: AiRankingHarness;
  const ana = makePerson("Ana");
  const bo = makePerson("Bo", "Europe/Berlin");

  beforeAll(async () => {
    h = await AiRankingHarness.start({ now: () => NOW, env: { AI_HISTORY_CHECK_MS: "50" } });
    await h.account(ana);
    await h.account(bo);
    // Ten weeks of Tuesday 10:00 UTC meetings between them, and Bo's own Thursday 15:00 (Berlin) ones.
    for (let w = 1; w <= 10; w++) {
      await h.meeting(ana, [bo], MONDAY - w * 7 * DAY + DAY + 10 * HOUR, { title: "Secret roadmap" });
      await h.meeting(bo, [makePerson("Outsider")], MONDAY - w * 7 * DAY + 3 * DAY + 14 * HOUR);
    }
  });
  afterAll(async () => h?.stop());

  const rank = (candidates: Array<{ start: string; end: string }>) =>
    h.bus.request(aiRankingRank, {
      mode: "test",
      callerUserId: ana.userId,
      people: [{ userId: ana.userId, timezone: ana.timezone }, { userId: bo.userId, timezone: bo.timezone }],
      candidates,
    });

  it("learns from meeting events and ranks the usual time first, naming the pattern", async () => {
    await eventually(async () => (await h.db("patterns").where({ user_id: bo.userId, mode: "test" }).first())?.patterns.meetings === 20);
    const { scores } = await rank([slot(4, 16), slot(1, 10), slot(2, 8)]);
    expect(scores[0]!.start).toBe(slot(1, 10).start);
    expect(scores[0]!.reason).toMatch(/^Tuesday mornings are when you and Bo usually meet/);
    for (const s of scores) expect(s.score).toBeGreaterThanOrEqual(0);
    // Nothing of a meeting's title is kept.
    const stored = JSON.stringify(await h.db("meetings").select());
    expect(stored).not.toContain("Secret roadmap");
  });

  it("follows stated preferences from account events over learned habits", async () => {
    await h.account(ana, { preferredTimes: [{ start: "15:00", end: "18:00" }], avoidDays: ["tuesday"], bufferMinutes: null, maxMeetingsPerDay: null }, true);
    await eventually(async () => (await h.db("people").where({ user_id: ana.userId }).first())?.preferences !== null);
    const { scores } = await rank([slot(1, 10), slot(4, 16)]);
    expect(scores[0]!.start).toBe(slot(4, 16).start);
    expect(scores[1]!.reason).toMatch(/^You avoid Tuesdays; outside your stated 15:00–18:00/);
    await h.account(ana, { preferredTimes: [], avoidDays: [], bufferMinutes: null, maxMeetingsPerDay: null }, true);
    await eventually(async () => (await h.db("people").where({ user_id: ana.userId }).first())?.preferences?.avoidDays?.length === 0);
  });

  it("counts an upcoming meeting in the day's load and forgets a cancelled one", async () => {
    const upcoming = await h.meeting(bo, [ana], NEXT_WEEK + DAY + 14 * HOUR);
    await eventually(async () => (await h.db("attendance").where({ meeting_id: upcoming })).length === 2);
    const busyTuesday = await rank([slot(1, 10)]);
    expect(busyTuesday.scores[0]!.reason).toContain("busier day than usual");
    await h.cancel(upcoming, bo, [ana], NEXT_WEEK + DAY + 14 * HOUR);
    await eventually(async () => (await h.db("meetings").where({ meeting_id: upcoming }).first())?.confirmed === false);
    const free = await rank([slot(1, 10)]);
    expect(free.scores[0]!.reason).not.toContain("busier day than usual");
  });

  it("ranks people it has never heard of as knowing nothing", async () => {
    const { scores } = await h.bus.request(aiRankingRank, { mode: "live", callerUserId: "usr_unknown", people: [{ userId: "usr_unknown", timezone: "UTC" }], candidates: [slot(0, 9)] });
    expect(scores).toHaveLength(1);
    expect(scores[0]!.reason).toMatch(/^No meeting history/);
  });

  it("rebuilds everything from the streams in a new generation", async () => {
    await h.stopService();
    expect(await startNewGeneration(h.db)).toBe(2);
    for (const table of ["meetings", "attendance", "people", "patterns"]) expect(await h.db(table).count({ n: "*" }).first()).toEqual({ n: 0 });
    await h.startService();
    await eventually(async () => (await h.db("patterns").where({ user_id: bo.userId, mode: "test" }).first())?.patterns.meetings === 20, 10_000);
    await eventually(async () => (await h.db("people").where({ user_id: ana.userId }).first())?.preferences?.avoidDays?.length === 0);
    const { scores } = await rank([slot(4, 16), slot(1, 10)]);
    expect(scores[0]!.start).toBe(slot(1, 10).start);
  });
  it("moves a running replica to a rebuild's new generation without a restart", async () => {
    expect(await startNewGeneration(h.db)).toBe(3);
    // Only the new generation's consumers can fill the emptied tables again.
    await eventually(async () => (await h.db("patterns").where({ user_id: bo.userId, mode: "test" }).first())?.patterns.meetings === 20, 10_000);
    await eventually(async () => (await h.db("people").where({ user_id: ana.userId }).first())?.preferences?.avoidDays?.length === 0);
    const { scores } = await rank([slot(4, 16), slot(1, 10)]);
    expect(scores[0]!.start).toBe(slot(1, 10).start);
  });
});
