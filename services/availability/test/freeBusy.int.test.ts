import { bind } from "@sched/bus";
import { invitesCalendarBusy, meetingsBusy, type BusyInterval } from "@sched/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "./harness.js";

describe("POST /v1/availability/free-busy", () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld({ now: Date.parse("2030-03-01T00:00:00Z") });
  });
  afterAll(async () => w?.close());

  const RANGE = { from: "2030-03-04T00:00:00Z", to: "2030-03-05T00:00:00Z" };

  it("asks meetings once for everyone visible, and says per person whether a connected calendar answered", async () => {
    const ann = await w.user({ name: "Ann" });
    const bob = await w.user({ name: "Bob" });
    const cy = await w.user({ name: "Cy" });
    await w.contact(bob, ann);
    await w.contact(cy, ann);
    await w.meeting(bob, { startTime: "2030-03-04T09:00:00Z", duration: "1 hour" });
    // Invites answers for Bob's calendar but says Cy's provider did not answer in time.
    const invites = await w.bus.serve({ name: "invites-double", version: "0.0.0" }, [
      bind(invitesCalendarBusy, async () => {
        const calendar: BusyInterval = [Date.parse("2030-03-04T10:00:00Z") / 1_000, Date.parse("2030-03-04T11:00:00Z") / 1_000];
        return { busy: [{ userId: bob.id, intervals: [calendar] }], complete: false, incompleteUserIds: [cy.id], missingCalendars: [{ userId: cy.id, provider: "microsoft" as const }] };
      }),
    ]);
    try {
      w.asked.length = 0;
      const answer = await w.freeBusy(w.callerFor(ann), { participants: [bob.email, cy.email, ann.email], ...RANGE });
      expect(answer.status).toBe(200);
      expect(JSON.parse(JSON.stringify(answer.body))).toEqual({
        from: "2030-03-04T00:00:00Z",
        to: "2030-03-05T00:00:00Z",
        people: [
          { email: bob.email, busy: [{ start: "2030-03-04T09:00:00Z", end: "2030-03-04T11:00:00Z" }], busyComplete: true },
          { email: cy.email, busy: [], busyComplete: false, missingCalendars: ["microsoft"] },
          { email: ann.email, busy: [], busyComplete: true },
        ],
        notVisible: [],
      });
      expect(w.asked.filter((s) => s === meetingsBusy.subject)).toHaveLength(1);
    } finally {
      await invites.stop();
    }
  });

  it("counts nobody's busy time as complete when the calendar service does not answer", async () => {
    const ann = await w.user({ name: "Ann" });
    const bob = await w.user({ name: "Bob" });
    await w.contact(bob, ann);
    const answer = await w.freeBusy(w.callerFor(ann), { participants: [bob.email], ...RANGE });
    expect(answer.status).toBe(200);
    // Which calendars went missing nobody can tell then: none is named.
    expect(JSON.parse(JSON.stringify(answer.body)).people).toEqual([{ email: bob.email, busy: [], busyComplete: false, missingCalendars: [] }]);
  });

  it("is 503 when meetings does not answer, never an answer that shows people free", async () => {
    const ann = await w.user({ name: "Ann" });
    await w.siblings.meetings.stop();
    try {
      const answer = await w.freeBusy(w.callerFor(ann), { participants: [ann.email], ...RANGE });
      expect(answer.status).toBe(503);
      expect(answer.body.error.code).toBe("service_unavailable");
    } finally {
      await w.siblings.meetings.start();
    }
  });
});
