import { availabilityDay, availabilityFreeBusy, availabilityRecommend, availabilityRoutes } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { availabilityService } from "../src/index.js";
import { startWorld, type World } from "./harness.js";

describe("the availability module as the runtimes start it", () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({ realService: true });
  });
  afterAll(async () => w?.close());

  it("declares its schema, no table, and its config with the ai-ranking and connected-calendar deadlines", () => {
    expect(availabilityService).toMatchObject({ name: "availability", schema: "availability", migrations: [] });
    expect(availabilityService.config.parse({})).toEqual({ AI_RANKING_TIMEOUT_MS: 800, CALENDAR_BUSY_TIMEOUT_MS: 1_000 });
    expect(availabilityService.config.parse({ AI_RANKING_TIMEOUT_MS: "250", CALENDAR_BUSY_TIMEOUT_MS: "400" })).toEqual({ AI_RANKING_TIMEOUT_MS: 250, CALENDAR_BUSY_TIMEOUT_MS: 400 });
    expect(() => availabilityService.config.parse({ AI_RANKING_TIMEOUT_MS: "0" })).toThrow();
    expect(() => availabilityService.config.parse({ AI_RANKING_TIMEOUT_MS: "soon" })).toThrow();
  });

  it("exports its three routes for the gateway", () => {
    expect(availabilityRoutes.map((r) => [r.method, r.path, r.endpoint.subject, r.scope, r.bucket, r.hasBody, r.idempotent ?? false])).toEqual([
      ["GET", "/v1/availability", availabilityDay.subject, "availability:read", "standard", false, false],
      ["POST", "/v1/availability/free-busy", availabilityFreeBusy.subject, "availability:read", "standard", true, true],
      ["POST", "/v1/availability/recommended", availabilityRecommend.subject, "availability:read", "ai", true, true],
    ]);
  });

  it("reads today on the real clock, in the user's zone", async () => {
    const kiribati = await w.user({ timezone: "Pacific/Kiritimati" }); // UTC+14: often a day ahead of UTC
    const answer = await w.day(w.callerFor(kiribati), { date: "today" });
    const expected = new Date(Date.now() + 14 * 3_600_000).toISOString().slice(0, 10);
    expect(answer.status).toBe(200);
    expect(answer.body.date).toBe(expected);
  });

  it("recommends times from now on, and answers useAI without an ai-ranking service with the heuristic", async () => {
    const alice = await w.user({ timezone: "UTC", workingHours: ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((day) => ({ day: day as "monday", start: "00:00", end: "23:59" })) });
    const answer = await w.recommend(w.callerFor(alice), { participants: ["someone@elsewhere.example"], duration: "15 mins", useAI: true });
    expect(answer.status).toBe(200);
    expect(answer.body.rankedBy).toBe("heuristic");
    expect(answer.body.slots).toHaveLength(10);
    for (const s of answer.body.slots) expect(Date.parse(s.start)).toBeGreaterThanOrEqual(Date.now() - 60_000);
  });

  describe("when a sibling does not answer, 503 service_unavailable", () => {
    it("accounts", async () => {
      const alice = await w.user();
      await w.siblings.accounts.stop();
      try {
        expect((await w.day(w.callerFor(alice), { date: "today" })).body.error).toMatchObject({ code: "service_unavailable" });
        expect((await w.recommend(w.callerFor(alice), { participants: ["x@example.com"], duration: "30 mins" })).status).toBe(503);
      } finally {
        await w.siblings.accounts.start();
      }
    });

    it("contacts, asked for email= and for participants with an account", async () => {
      const alice = await w.user();
      const bob = await w.user();
      await w.contact(bob, alice);
      await w.siblings.contacts.stop();
      try {
        expect((await w.day(w.callerFor(alice), { date: "today", email: bob.email })).status).toBe(503);
        expect((await w.recommend(w.callerFor(alice), { participants: [bob.email], duration: "30 mins" })).status).toBe(503);
        // The own day needs no grant.
        expect((await w.day(w.callerFor(alice), { date: "today" })).status).toBe(200);
      } finally {
        await w.siblings.contacts.start();
      }
    });

    it("meetings", async () => {
      const alice = await w.user();
      await w.siblings.meetings.stop();
      try {
        expect((await w.day(w.callerFor(alice), { date: "2030-03-04" })).status).toBe(503);
        expect((await w.recommend(w.callerFor(alice), { participants: ["x@example.com"], duration: "30 mins", from: "2030-03-04", to: "2030-03-05" })).status).toBe(503);
        // A day without working hours asks meetings nothing.
        expect((await w.day(w.callerFor(alice), { date: "2030-03-09" })).status).toBe(200);
      } finally {
        await w.siblings.meetings.start();
      }
    });
  });
});
