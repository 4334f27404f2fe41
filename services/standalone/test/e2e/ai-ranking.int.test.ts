import { eventually } from "@sched/testing";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { call, createUserWithKey, systemPerSuite, WIRINGS } from "../harness.js";

describe.each(WIRINGS)("AI ranking end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  it.runIf(available)("ranks by the people's habits and stated preferences with useAI, and falls back to the heuristic at once without ai-ranking", async () => {
    const ana = await createUserWithKey(suite.url, { name: "Ana", timezone: "UTC" });
    const bo = await createUserWithKey(suite.url, { name: "Bo", timezone: "UTC" });
    expect((await call(suite.url, "POST", "/v1/contacts", { key: ana.key, body: { email: bo.email } })).status).toBe(201);
    // Eight weeks of Tuesday 10:00 meetings between them, in the past.
    const lastTuesday = DateTime.utc().startOf("week").minus({ weeks: 1 }).plus({ days: 1, hours: 10 });
    for (let w = 0; w < 8; w++) {
      const startTime = lastTuesday.minus({ weeks: w }).toISO({ suppressMilliseconds: true })!;
      const created = await call(suite.url, "POST", "/v1/meetings", { key: ana.key, body: { title: "Weekly sync", duration: "1 hour", startTime, participants: [bo.email], sendInvites: false } });
      expect(created.status).toBe(201);
    }
    const aiRanking = suite.sys.system.database("ai-ranking");
    await eventually(async () => (await aiRanking("patterns").where({ user_id: bo.userId, mode: "test" }).first())?.patterns.meetings === 8, 10_000);

    const nextMonday = DateTime.utc().startOf("week").plus({ weeks: 1 });
    const body = { participants: [bo.email], duration: "1 hour", from: nextMonday.toISODate(), to: nextMonday.plus({ days: 4 }).toISODate(), limit: 5, useAI: true };
    const ranked = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body });
    expect(ranked.status).toBe(200);
    expect(ranked.body.rankedBy).toBe("ai");
    const best = DateTime.fromISO(ranked.body.slots[0].start, { zone: "UTC" });
    expect(best.weekday).toBe(2);
    expect(best.hour).toBeGreaterThanOrEqual(9);
    expect(best.hour).toBeLessThanOrEqual(11);
    expect(ranked.body.slots[0].reason).toMatch(/^Tuesday mornings are when you and Bo usually meet/);
    const scores = ranked.body.slots.map((s: { score: number }) => s.score);
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));
    // The reasons speak of habits; the heuristic's never do.
    expect(ranked.body.slots.some((s: { reason: string }) => /usually meet|unusual for|usual \d+ meeting/.test(s.reason))).toBe(true);

    // Stated preferences reach ai-ranking through the account's events and outweigh the habit.
    const patched = await call(suite.url, "PATCH", "/v1/me", { key: ana.key, body: { preferences: { avoidDays: ["tuesday"] } } });
    expect(patched.status).toBe(200);
    expect(patched.body.preferences).toEqual({ preferredTimes: [], avoidDays: ["tuesday"], bufferMinutes: null, maxMeetingsPerDay: null });
    await eventually(async () => (await aiRanking("people").where({ user_id: ana.userId }).first())?.preferences?.avoidDays?.[0] === "tuesday", 10_000);
    const avoiding = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body });
    expect(avoiding.body.rankedBy).toBe("ai");
    expect(avoiding.body.slots.every((s: { start: string }) => DateTime.fromISO(s.start, { zone: "UTC" }).weekday !== 2)).toBe(true);
    // Further down, a Tuesday slot says whose avoided day it is; Bo's stated hours are named where a slot lies in them.
    const bosHours = await call(suite.url, "PATCH", "/v1/me", { key: bo.key, body: { preferences: { preferredTimes: [{ start: "14:00", end: "16:00" }] } } });
    expect(bosHours.status).toBe(200);
    await eventually(async () => (await aiRanking("people").where({ user_id: bo.userId }).first())?.preferences?.preferredTimes?.length === 1, 10_000);
    const all = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body: { ...body, limit: 50 } });
    expect(all.body.rankedBy).toBe("ai");
    const tuesday = all.body.slots.find((s: { start: string }) => DateTime.fromISO(s.start, { zone: "UTC" }).weekday === 2);
    expect(tuesday.reason).toMatch(/^You avoid Tuesdays/);
    expect(all.body.slots[0].reason).toMatch(/^Inside Bo's stated 14:00–16:00/);
    expect(DateTime.fromISO(all.body.slots[0].start, { zone: "UTC" }).hour).toBeGreaterThanOrEqual(14);

    await suite.sys.system.stopService("ai-ranking");
    try {
      const started = performance.now();
      const fallback = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body });
      const elapsed = performance.now() - started;
      expect(fallback.status).toBe(200);
      expect(fallback.body.rankedBy).toBe("heuristic");
      expect(fallback.body.slots).toHaveLength(5);
      expect(fallback.body.slots.every((s: { reason: string }) => !/usually meet/.test(s.reason))).toBe(true);
      // No responder answers at once; at worst the request waits out availability's short deadline.
      expect(elapsed).toBeLessThan(1_500);
    } finally {
      await suite.sys.system.startService("ai-ranking");
    }
  });

  it.runIf(available)("with nothing known about anyone, ranks as the heuristic does: the same slots, spread over the days", async () => {
    const ana = await createUserWithKey(suite.url, { name: "Ana", timezone: "UTC" });
    const bo = await createUserWithKey(suite.url, { name: "Bo", timezone: "UTC" });
    expect((await call(suite.url, "POST", "/v1/contacts", { key: ana.key, body: { email: bo.email } })).status).toBe(201);
    const nextMonday = DateTime.utc().startOf("week").plus({ weeks: 1 });
    const body = { participants: [bo.email], duration: "1 hour", from: nextMonday.toISODate(), to: nextMonday.plus({ days: 4 }).toISODate(), limit: 8 };
    const heuristic = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body });
    const ai = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body: { ...body, useAI: true } });
    expect(ai.status).toBe(200);
    expect(ai.body.rankedBy).toBe("ai");
    const times = (slots: Array<{ start: string; end: string; withinWorkingHours: string[] }>) => slots.map(({ start, end, withinWorkingHours }) => ({ start, end, withinWorkingHours }));
    expect(times(ai.body.slots)).toEqual(times(heuristic.body.slots));
    expect(new Set(ai.body.slots.map((s: { start: string }) => s.start.slice(0, 10))).size).toBeGreaterThanOrEqual(4);
    for (const s of ai.body.slots) expect(s.reason).toMatch(/^No meeting history or stated preferences to learn from yet; ranked as without AI/);
  });

  it.runIf(available)("ranks every slot inside everyone's working hours above those outside someone's, even against their habits", async () => {
    // Cy works 09:00–17:00 in Kolkata (03:30–11:30 UTC); Ana in UTC. Their history is all at 14:00 UTC, outside Cy's hours.
    const ana = await createUserWithKey(suite.url, { name: "Ana", timezone: "UTC" });
    const cy = await createUserWithKey(suite.url, { name: "Cy", timezone: "Asia/Kolkata" });
    expect((await call(suite.url, "POST", "/v1/contacts", { key: ana.key, body: { email: cy.email } })).status).toBe(201);
    const lastWeek = DateTime.utc().startOf("week").minus({ weeks: 1 });
    for (let w = 0; w < 5; w++) {
      for (let d = 0; d < 5; d++) {
        const startTime = lastWeek.minus({ weeks: w }).plus({ days: d, hours: 14 }).toISO({ suppressMilliseconds: true })!;
        const created = await call(suite.url, "POST", "/v1/meetings", { key: ana.key, body: { title: "Late sync", duration: "1 hour", startTime, participants: [cy.email], sendInvites: false } });
        expect(created.status).toBe(201);
      }
    }
    const aiRanking = suite.sys.system.database("ai-ranking");
    await eventually(async () => (await aiRanking("patterns").where({ user_id: cy.userId, mode: "test" }).first())?.patterns.meetings === 25, 20_000);

    const nextMonday = DateTime.utc().startOf("week").plus({ weeks: 1 });
    const body = { participants: [cy.email], duration: "1 hour", from: nextMonday.toISODate(), to: nextMonday.plus({ days: 4 }).toISODate(), limit: 20, useAI: true };
    const ranked = await call(suite.url, "POST", "/v1/availability/recommended", { key: ana.key, body });
    expect(ranked.status).toBe(200);
    expect(ranked.body.rankedBy).toBe("ai");
    const inside = (s: { withinWorkingHours: string[] }) => s.withinWorkingHours.length === 2;
    const firstOutside = ranked.body.slots.findIndex((s: { withinWorkingHours: string[] }) => !inside(s));
    expect(firstOutside).toBeGreaterThanOrEqual(5);
    expect(ranked.body.slots.slice(firstOutside).some(inside)).toBe(false);
    for (const s of ranked.body.slots.slice(firstOutside)) expect(s.reason).toMatch(/^Outside Cy's working hours/);
  });
});
