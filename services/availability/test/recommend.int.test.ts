import { bind, type Stoppable } from "@sched/bus";
import { AppError } from "@sched/errors";
import {
  RecommendationBody,
  accountsLookupUsers,
  aiRankingRank,
  contactsVisibility,
  invitesCalendarBusy,
  meetingsBusy,
  type BusyInterval,
  type Meeting,
  type RecommendedSlot,
  type RequestOf,
  type UserProfile,
} from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, weekdays, type Answer, type World } from "./harness.js";

const MIN = 60_000;
const DURATION_MIN = { "15 mins": 15, "30 mins": 30, "45 mins": 45, "1 hour": 60, "1.5 hours": 90, "2 hours": 120 } as const;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00Z$/;

interface Span {
  start: number;
  end: number;
}
const spanOf = (slot: { start: string; end: string }): Span => ({ start: Date.parse(slot.start), end: Date.parse(slot.end) });
const meetingSpan = (m: Meeting): Span => ({ start: Date.parse(m.startTime), end: Date.parse(m.startTime) + DURATION_MIN[m.duration] * MIN });
const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end;
const at = (iso: string) => Date.parse(iso);

/** Sunday 2030-03-03, noon UTC; the tests look at Monday 2030-03-04 (Berlin is UTC+1). */
const SUNDAY_NOON = at("2030-03-03T12:00:00Z");
const MONDAY = { from: "2030-03-04", to: "2030-03-04" };

function slotsOf(answer: Answer): RecommendedSlot[] {
  expect(answer.status).toBe(200);
  const body = RecommendationBody.parse(answer.body);
  for (const s of body.slots) {
    expect(s.start).toMatch(TIMESTAMP);
    expect(s.end).toMatch(TIMESTAMP);
    expect(s.score).toBeGreaterThanOrEqual(0);
    expect(s.score).toBeLessThanOrEqual(1);
    expect(s.reason.length).toBeGreaterThan(0);
    // The 15-minute grid (every zone in these tests is a whole-hour offset from UTC).
    expect(new Date(s.start).getUTCMinutes() % 15).toBe(0);
  }
  for (let k = 1; k < body.slots.length; k++) expect(body.slots[k - 1]!.score).toBeGreaterThanOrEqual(body.slots[k]!.score);
  expect(body.emptyReason === undefined).toBe(body.slots.length > 0);
  return body.slots;
}

describe("POST /v1/availability/recommended with the real contacts and meetings services", () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({ now: SUNDAY_NOON, aiRankingTimeoutMs: 300 });
  });
  afterAll(async () => w?.close());

  const ghost = "no-account@nowhere.example";

  describe("who counts", () => {
    let alice: UserProfile;
    let bob: UserProfile;
    let carol: UserProfile;
    let dave: UserProfile;
    let erin: UserProfile;
    let frank: UserProfile;
    const countedMeetings: Meeting[] = [];
    const ignoredMeetings: Meeting[] = [];

    beforeAll(async () => {
      alice = await w.user({ name: "Alice", timezone: "Europe/Berlin" }); // 09:00–17:00 Berlin
      bob = await w.user({ name: "Bob", timezone: "UTC" }); // 09:00–17:00 UTC = 10:00–18:00 Berlin
      carol = await w.user({ name: "Carol", timezone: "Europe/Berlin", workingHours: weekdays("09:00", "15:00") });
      dave = await w.user({ name: "Dave" });
      erin = await w.user({ name: "Erin" });
      frank = await w.user({ name: "Frank" });
      await w.contact(alice, bob); // Alice lists Bob
      await w.contact(carol, alice); // Carol lists Alice
      await w.contact(alice, erin, { blocked: true }); // Alice blocked Erin
      await w.contact(erin, alice);
      await w.contact(frank, alice, { blocked: true }); // Frank blocked Alice
      await w.contact(alice, frank);

      countedMeetings.push(await w.meeting(bob, { startTime: "2030-03-04T08:00:00Z", duration: "2 hours" })); // 09–11 Berlin
      countedMeetings.push(await w.meeting(dave, { startTime: "2030-03-04T10:00:00Z", duration: "2 hours", participants: [carol.email] })); // 11–13, Carol attends
      ignoredMeetings.push(await w.meeting(dave, { startTime: "2030-03-04T12:00:00Z", duration: "2 hours" })); // 13–15
      ignoredMeetings.push(await w.meeting(erin, { startTime: "2030-03-04T14:00:00Z", duration: "2 hours" })); // 15–17
      ignoredMeetings.push(await w.meeting(frank, { startTime: "2030-03-04T12:00:00Z", duration: "2 hours" }));
      ignoredMeetings.push(await w.meeting(frank, { startTime: "2030-03-04T14:00:00Z", duration: "2 hours" }));
    });

    it("counts contacts in either direction, ignores the blocked either way, strangers and non-accounts, and never lists the caller", async () => {
      const participants = [bob.email, carol.email.toUpperCase(), dave.email, erin.email, frank.email, ghost, alice.email];
      w.asked.length = 0;
      const answer = await w.recommend(w.callerFor(alice), { participants, duration: "1 hour", ...MONDAY, limit: 50 });
      const slots = slotsOf(answer);
      expect(answer.body.consideredParticipants).toEqual([bob.email, carol.email]);
      expect(answer.body.rankedBy).toBe("heuristic");
      // One question to each sibling; the busy time of all three counted people in one request.
      expect(w.asked).toEqual([accountsLookupUsers.subject, contactsVisibility.subject, meetingsBusy.subject, invitesCalendarBusy.subject]);

      expect(slots.length).toBeGreaterThan(0);
      for (const slot of slots) {
        const span = spanOf(slot);
        // Alice's working hours (timeRange any), after Carol's meeting ends at 13:00 Berlin.
        expect(span.start).toBeGreaterThanOrEqual(at("2030-03-04T12:00:00Z"));
        expect(span.end).toBeLessThanOrEqual(at("2030-03-04T16:00:00Z"));
        for (const m of countedMeetings) expect(overlaps(span, meetingSpan(m))).toBe(false);
      }
      // Time only the ignored people have taken is offered.
      expect(slots.some((s) => ignoredMeetings.some((m) => overlaps(spanOf(s), meetingSpan(m))))).toBe(true);
    });

    it("lists, per slot, the counted people (the caller included) whose working hours hold it", async () => {
      const answer = await w.recommend(w.callerFor(alice), { participants: [bob.email, carol.email], duration: "1 hour", ...MONDAY, limit: 50 });
      const slots = slotsOf(answer);
      // In UTC: Alice works 08–16, Bob 09–17, Carol 08–14.
      const hours: Array<[UserProfile, string, string]> = [
        [alice, "08:00", "16:00"],
        [bob, "09:00", "17:00"],
        [carol, "08:00", "14:00"],
      ];
      for (const slot of slots) {
        const span = spanOf(slot);
        const inside = hours.filter(([, from, to]) => span.start >= at(`2030-03-04T${from}:00Z`) && span.end <= at(`2030-03-04T${to}:00Z`));
        expect(slot.withinWorkingHours).toEqual(inside.map(([p]) => p.email));
      }
      expect(slots.some((s) => s.withinWorkingHours.length === 3)).toBe(true);
      expect(slots.some((s) => s.withinWorkingHours.length === 2)).toBe(true);
      expect(slots[0]!.withinWorkingHours).toHaveLength(3);
      expect(slots[0]!.reason).toBe("Tomorrow everyone is free, inside working hours for all 3 people, at least 30 minutes from other meetings.");
    });

    it("does not count a participant related to the caller only in the other mode", async () => {
      const liveFriend = await w.user();
      await w.contact(liveFriend, alice, { mode: "live" });
      await w.meeting(liveFriend, { startTime: "2030-03-04T08:00:00Z", duration: "2 hours" });
      const test = await w.recommend(w.callerFor(alice), { participants: [liveFriend.email], duration: "30 mins", ...MONDAY });
      expect(test.body.consideredParticipants).toEqual([]);
      const live = await w.recommend(w.callerFor(alice, "live"), { participants: [liveFriend.email], duration: "30 mins", ...MONDAY });
      expect(live.body.consideredParticipants).toEqual([liveFriend.email]);
    });

    it("counts the caller alone when nobody else counts, without asking contacts", async () => {
      w.asked.length = 0;
      const answer = await w.recommend(w.callerFor(alice), { participants: [ghost, alice.email], duration: "30 mins", ...MONDAY });
      expect(answer.body.consideredParticipants).toEqual([]);
      expect(slotsOf(answer).length).toBe(10);
      expect(w.asked).toEqual([accountsLookupUsers.subject, meetingsBusy.subject, invitesCalendarBusy.subject]);
    });
  });

  describe("time ranges and the horizon", () => {
    let alice: UserProfile;
    let meeting: Meeting;
    beforeAll(async () => {
      alice = await w.user({ name: "Alice", timezone: "Europe/Berlin" });
      meeting = await w.meeting(alice, { startTime: "2030-03-04T08:30:00Z", duration: "1 hour" }); // 09:30–10:30 Berlin
    });
    const ask = (body: Record<string, unknown>) => w.recommend(w.callerFor(alice), { participants: [ghost], duration: "30 mins", ...MONDAY, limit: 50, ...body });

    it.each([
      ["morning", "07:00", "11:00"],
      ["afternoon", "11:00", "16:00"],
      ["evening", "16:00", "20:00"],
      ["any", "08:00", "16:00"],
    ])("%s: every slot lies between %s and %s UTC (Berlin 08–12, 12–17, 17–21, working hours)", async (timeRange, from, to) => {
      const slots = slotsOf(await ask({ timeRange }));
      expect(slots.length).toBeGreaterThan(0);
      for (const s of slots) {
        expect(spanOf(s).start).toBeGreaterThanOrEqual(at(`2030-03-04T${from}:00Z`));
        expect(spanOf(s).end).toBeLessThanOrEqual(at(`2030-03-04T${to}:00Z`));
        expect(overlaps(spanOf(s), meetingSpan(meeting))).toBe(false);
      }
    });

    it("says when a slot of a time range lies outside the caller's working hours", async () => {
      for (const s of slotsOf(await ask({ timeRange: "evening" }))) {
        expect(s.withinWorkingHours).toEqual([]);
        expect(s.reason).toMatch(/outside your working hours/);
      }
      const morning = slotsOf(await ask({ timeRange: "morning" }));
      expect(morning.find((s) => s.start === "2030-03-04T07:00:00Z")?.withinWorkingHours).toEqual([]); // 08:00 Berlin, before work
      for (const s of slotsOf(await ask({ timeRange: "any" }))) expect(s.withinWorkingHours).toEqual([alice.email]);
    });

    it("defaults to any, limit 10, and the 7 days from now; never a slot in the past", async () => {
      w.now = at("2030-03-04T10:07:00Z"); // Monday 11:07 in Berlin
      try {
        const slots = slotsOf(await w.recommend(w.callerFor(alice), { participants: [ghost], duration: "45 mins" }));
        expect(slots).toHaveLength(10);
        for (const s of slots) {
          expect(spanOf(s).start).toBeGreaterThanOrEqual(at("2030-03-04T10:15:00Z"));
          expect(spanOf(s).end).toBeLessThanOrEqual(at("2030-03-11T10:07:00Z"));
        }
        // Spread across the days rather than ten neighbours on one morning.
        expect(new Set(slots.map((s) => s.start.slice(0, 10))).size).toBeGreaterThan(1);
        const today = slotsOf(await w.recommend(w.callerFor(alice), { participants: [ghost], duration: "45 mins", ...MONDAY, limit: 50 }));
        for (const s of today) expect(spanOf(s).start).toBeGreaterThanOrEqual(w.now);
      } finally {
        w.now = SUNDAY_NOON;
      }
    });

    it("honours limit", async () => {
      expect(slotsOf(await ask({ limit: 3, from: "2030-03-04", to: "2030-03-08" }))).toHaveLength(3);
    });

    it.each([
      ["from that is no date", { from: "next week" }, "from"],
      ["an impossible from", { from: "2030-02-30" }, "from"],
      ["to before from", { from: "2030-03-05", to: "2030-03-04T12:00:00Z" }, "to"],
      ["a horizon over 31 days", { from: "2030-03-04", to: "2030-04-05" }, "to"],
      ["24:00", { from: "2030-03-04T24:00" }, "from"],
    ])("refuses %s with 400 naming the field", async (_what, body, param) => {
      const answer = await ask(body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "invalid_request", param });
    });

    it.each([
      ["no participants", { participants: [] }, "participants"],
      ["a participant that is no e-mail", { participants: [ghost, "nope"] }, "participants[1]"],
      ["101 participants", { participants: Array.from({ length: 101 }, (_, i) => `p${i}@example.com`) }, "participants"],
      ["a duration not in the list", { duration: "20 mins" }, "duration"],
      ["an unknown timeRange", { timeRange: "night" }, "timeRange"],
      ["useAI that is no boolean", { useAI: "yes" }, "useAI"],
      ["limit 0", { limit: 0 }, "limit"],
      ["limit 51", { limit: 51 }, "limit"],
      ["an unknown field", { colour: "blue" }, "colour"],
    ])("refuses %s with 400 naming the field", async (_what, body, param) => {
      const answer = await ask(body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: "invalid_request", param });
    });

    it("refuses a request without an authenticated caller", async () => {
      const answer = await w.recommend(undefined, { participants: [ghost], duration: "30 mins" });
      expect(answer.status).toBe(401);
    });
  });

  describe("emptyReason", () => {
    it("horizon_too_short: no room for the duration between from and to, or a horizon in the past", async () => {
      const alice = await w.user();
      const short = await w.recommend(w.callerFor(alice), { participants: [ghost], duration: "30 mins", from: "2030-03-04T09:00:00+01:00", to: "2030-03-04T09:20:00+01:00" });
      expect(short.body).toEqual({ slots: [], consideredParticipants: [], consideredOptionalParticipants: [], rankedBy: "heuristic", emptyReason: "horizon_too_short" });
      const past = await w.recommend(w.callerFor(alice), { participants: [ghost], duration: "30 mins", from: "2030-02-25", to: "2030-03-01" });
      expect(past.body.emptyReason).toBe("horizon_too_short");
    });

    it("outside_working_hours: the horizon holds no working time of the caller", async () => {
      const alice = await w.user();
      const answer = await w.recommend(w.callerFor(alice), { participants: [ghost], duration: "30 mins", from: "2030-03-09", to: "2030-03-10" });
      expect(answer.body).toMatchObject({ slots: [], emptyReason: "outside_working_hours" });
    });

    it("no_common_free_time: a counted participant is busy all the caller's working day", async () => {
      const alice = await w.user();
      const bob = await w.user();
      await w.contact(bob, alice);
      for (const hour of ["08", "10", "12", "14"]) await w.meeting(bob, { startTime: `2030-03-04T${hour}:00:00Z`, duration: "2 hours" });
      const answer = await w.recommend(w.callerFor(alice), { participants: [bob.email], duration: "15 mins", ...MONDAY, useAI: true });
      // No calendar service answers here: nobody's connected calendars are known, and the answer says so.
      expect(answer.body).toEqual({
        slots: [],
        consideredParticipants: [bob.email],
        consideredOptionalParticipants: [],
        rankedBy: "heuristic",
        emptyReason: "no_common_free_time",
        busyComplete: false,
        incompleteBusy: [
          { email: alice.email, missingCalendars: [] },
          { email: bob.email, missingCalendars: [] },
        ],
      });
    });
  });

  describe("connected calendars", () => {
    it("names each counted person whose calendar did not answer, with its provider, and nobody when all answered", async () => {
      const alice = await w.user({ name: "Alice" });
      const bob = await w.user({ name: "Bob" });
      const cy = await w.user({ name: "Cy" });
      await w.contact(bob, alice);
      await w.contact(cy, alice);
      let cysCalendarAnswers = false;
      // Bob's calendar holds his whole Monday; Cy's Microsoft calendar does not answer in time.
      const invites = await w.bus.serve({ name: "invites-double", version: "0.0.0" }, [
        bind(invitesCalendarBusy, async ({ userIds }) => {
          const monday: BusyInterval = [at("2030-03-04T00:00:00Z") / 1_000, at("2030-03-05T00:00:00Z") / 1_000];
          const busy = userIds.includes(bob.id) ? [{ userId: bob.id, intervals: [monday] }] : [];
          return cysCalendarAnswers ? { busy, complete: true } : { busy, complete: false, incompleteUserIds: [cy.id], missingCalendars: [{ userId: cy.id, provider: "microsoft" as const }] };
        }),
      ]);
      try {
        const body = { participants: [cy.email], optionalParticipants: [bob.email], duration: "30 mins", ...MONDAY };
        const partial = await w.recommend(w.callerFor(alice), body);
        expect(slotsOf(partial).length).toBeGreaterThan(0);
        expect(partial.body).toMatchObject({ busyComplete: false, incompleteBusy: [{ email: cy.email, missingCalendars: ["microsoft"] }] });
        // Bob's calendar answered: he is busy in every slot, and not named as incomplete.
        for (const slot of slotsOf(partial)) expect(slot.availableParticipants).toEqual([alice.email, cy.email]);

        cysCalendarAnswers = true;
        const complete = await w.recommend(w.callerFor(alice), body);
        expect(slotsOf(complete).length).toBeGreaterThan(0);
        expect(complete.body.busyComplete).toBeUndefined();
        expect(complete.body.incompleteBusy).toBeUndefined();
      } finally {
        await invites.stop();
      }
    });
  });

  it("counts 100 participants besides the caller, the busy time of all 101 asked in one request", async () => {
    const alice = await w.user({ name: "Alice" });
    const others: UserProfile[] = [];
    for (let i = 0; i < 100; i++) {
      const other = await w.user({ name: `P${i}` });
      await w.contact(other, alice);
      others.push(other);
    }
    // The last one is busy all of Alice's Monday: only a complete answer knows it.
    const last = others[99]!;
    for (const hour of ["08", "10", "12", "14"]) await w.meeting(last, { startTime: `2030-03-04T${hour}:00:00Z`, duration: "2 hours" });
    w.asked.length = 0;
    const answer = await w.recommend(w.callerFor(alice), { participants: others.map((o) => o.email), duration: "30 mins", ...MONDAY });
    expect(answer.body.consideredParticipants).toHaveLength(100);
    expect(answer.body.emptyReason).toBe("no_common_free_time");
    expect(w.asked.filter((s) => s === meetingsBusy.subject)).toHaveLength(1);
    expect(w.asked.filter((s) => s === invitesCalendarBusy.subject)).toHaveLength(1);
  });

  describe("useAI", () => {
    let alice: UserProfile;
    let bob: UserProfile;
    let bobsMeeting: Meeting;
    const body = () => ({ participants: [bob.email], duration: "30 mins", from: "2030-03-04", to: "2030-03-08", limit: 5 });
    beforeAll(async () => {
      alice = await w.user({ name: "Alice" });
      bob = await w.user({ name: "Bob", timezone: "America/New_York" });
      await w.contact(alice, bob);
      bobsMeeting = await w.meeting(bob, { startTime: "2030-03-04T14:00:00Z", duration: "1 hour" });
    });

    async function withRanker<T>(rank: (request: RequestOf<typeof aiRankingRank>) => Promise<{ scores: Array<{ start: string; score: number; reason: string }> }>, work: () => Promise<T>): Promise<T> {
      const served: Stoppable = await w.bus.serve({ name: "ai-ranking-double", version: "0.0.0" }, [bind(aiRankingRank, rank)]);
      try {
        return await work();
      } finally {
        await served.stop();
      }
    }

    it("without an ai-ranking service, the heuristic answers at once with the same slots as without useAI", async () => {
      const plain = await w.recommend(w.callerFor(alice), body());
      const asked = await w.recommend(w.callerFor(alice), { ...body(), useAI: true });
      expect(asked.body.rankedBy).toBe("heuristic");
      expect(asked.body.slots).toEqual(plain.body.slots);
      expect(asked.body.slots).toHaveLength(5);
    });

    it("with an answering ai-ranking service, its scores order the slots and its reasons explain them", async () => {
      const received: Array<RequestOf<typeof aiRankingRank>> = [];
      const answer = await withRanker(
        async (request) => {
          received.push(request);
          // Later is better, for this ranker.
          const n = request.candidates.length;
          const chronological = request.candidates.map((c) => c.start).sort();
          return {
            scores: request.candidates.map((c) => {
              const rank = n - chronological.indexOf(c.start);
              return { start: c.start, score: (n + 1 - rank) / n, reason: `Ranked ${rank} of ${n} by the test model.` };
            }),
          };
        },
        () => w.recommend(w.callerFor(alice), { ...body(), useAI: true }),
      );
      expect(answer.body.rankedBy).toBe("ai");
      expect(received).toHaveLength(1);
      const request = received[0]!;
      expect(request).toMatchObject({
        mode: "test",
        callerUserId: alice.id,
        people: [
          { userId: alice.id, timezone: "Europe/Berlin" },
          { userId: bob.id, timezone: "America/New_York" },
        ],
      });
      expect(request.candidates.length).toBeGreaterThan(5);
      expect(request.candidates.length).toBeLessThanOrEqual(500);
      for (const c of request.candidates) expect(overlaps(spanOf(c), meetingSpan(bobsMeeting))).toBe(false);
      // Each candidate carries the heuristic's own score and whose working hours hold it: its best ones are its answer without useAI.
      const plain = slotsOf(await w.recommend(w.callerFor(alice), body()));
      const idOf = new Map([
        [alice.email, alice.id],
        [bob.email, bob.id],
      ]);
      expect(request.candidates.slice(0, 5)).toEqual(plain.map((s) => ({ start: s.start, end: s.end, heuristicScore: s.score, withinWorkingHours: s.withinWorkingHours.map((e) => idOf.get(e)) })));
      expect(request.candidates.some((c) => c.withinWorkingHours!.length < 2)).toBe(true);

      const slots = slotsOf(answer);
      expect(slots).toHaveLength(5);
      const latestFirst = [...request.candidates].sort((a, b) => b.start.localeCompare(a.start)).slice(0, 5);
      expect(slots.map((s) => s.start)).toEqual(latestFirst.map((c) => c.start));
      expect(slots.map((s) => s.end)).toEqual(latestFirst.map((c) => c.end));
      expect(slots[0]!.reason).toBe(`Ranked 1 of ${request.candidates.length} by the test model.`);
      expect(slots[0]!.score).toBe(1);
    });

    it("ignores scores for starts it was not asked about, and answers with the heuristic when none is left", async () => {
      const answer = await withRanker(
        async () => ({ scores: [{ start: "2031-01-01T00:00:00Z", score: 1, reason: "Not a candidate." }] }),
        () => w.recommend(w.callerFor(alice), { ...body(), useAI: true }),
      );
      expect(answer.body.rankedBy).toBe("heuristic");
      expect(answer.body.slots).toHaveLength(5);
    });

    it("answers with the heuristic when ai-ranking fails", async () => {
      const answer = await withRanker(
        async () => {
          throw new AppError("internal_error", "model exploded");
        },
        () => w.recommend(w.callerFor(alice), { ...body(), useAI: true }),
      );
      expect(answer.status).toBe(200);
      expect(answer.body.rankedBy).toBe("heuristic");
    });

    it("answers with the heuristic when ai-ranking does not answer within its deadline", async () => {
      let release: () => void = () => {};
      const hung = new Promise<void>((resolve) => {
        release = resolve;
      });
      const started = Date.now();
      const answer = await withRanker(
        async () => {
          await hung;
          return { scores: [] };
        },
        async () => {
          try {
            return await w.recommend(w.callerFor(alice), { ...body(), useAI: true });
          } finally {
            // Stopping the double waits for the requests it is answering.
            release();
          }
        },
      );
      expect(answer.body.rankedBy).toBe("heuristic");
      expect(answer.body.slots).toHaveLength(5);
      // The deadline in this world is 300 ms: the answer does not wait for the gateway's 5 s.
      expect(Date.now() - started).toBeLessThan(3_000);
    });
  });
});
