import fc from "fast-check";
import { DURATIONS, meetingCreated, meetingsCreate, SCOPES, type Caller } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { invitesOnCreate } from "../src/domain/changes.js";
import { newMeeting } from "../src/domain/create.js";
import { parseDateTime } from "../src/domain/datetime.js";
import { createdEventText } from "../src/domain/events.js";
import { toMeeting } from "../src/domain/meeting.js";

/** Text of any characters, quotes, backslashes, line separators and characters beyond the BMP included. */
const text = (maxLength: number) => fc.string({ unit: "grapheme", maxLength });
/** An address of the shape the API takes, in either case (it is stored lower-cased). */
const email = fc
  .tuple(fc.stringMatching(/^[A-Za-z0-9_+-]{1,20}$/), fc.stringMatching(/^[A-Za-z0-9]{1,12}$/), fc.constantFrom("com", "org", "Example"))
  .map(([local, domain, top]) => `${local}@${domain}.${top}`);

const bodyArb = fc.record(
  {
    title: text(210),
    description: text(300),
    duration: fc.constantFrom(...DURATIONS),
    startTime: fc.date({ min: new Date("1970-01-02T00:00:00Z"), max: new Date("9998-12-30T00:00:00Z"), noInvalidDate: true }).map((d) => `${d.toISOString().slice(0, 19)}Z`),
    participants: fc.array(email, { minLength: 1, maxLength: 5 }),
    sendInvites: fc.boolean(),
    status: fc.constantFrom("draft", "confirmed"),
  },
  { requiredKeys: ["title", "duration", "startTime", "participants"] },
);

const callerArb = fc.record({ email, mode: fc.constantFrom("live" as const, "test" as const), userId: fc.stringMatching(/^usr_[0-9A-Za-z]{8,24}$/) });

describe("the meeting.created event's JSON text", () => {
  it("is, for any request the route accepts, an event its schema takes as it is, whose meeting is the reply's", () => {
    fc.assert(
      fc.property(bodyArb, callerArb, fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }), (raw, who, now) => {
        const request = meetingsCreate.request.safeParse({ params: {}, query: {}, body: raw });
        fc.pre(request.success);
        const body = request.data!.body;
        const start = parseDateTime(body.startTime, "UTC");
        fc.pre(start.ok);
        const caller: Caller = { ...who, timezone: "UTC", scopes: [...SCOPES], apiKeyId: "key_0123456789" };
        const record = newMeeting({ id: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE", caller, body, startTime: start.ok ? start.value : now, now });
        const meeting = toMeeting(record);
        const sendInvites = invitesOnCreate(record.status, body.sendInvites ?? true);
        const event: unknown = JSON.parse(createdEventText(record, JSON.stringify(meeting), sendInvites, "evt_0123456789abcdefghijklmn", meeting.createdAt));
        expect(meetingCreated.payload.parse(event)).toStrictEqual(event);
        expect(event).toStrictEqual({
          eventId: "evt_0123456789abcdefghijklmn",
          meetingId: record.id,
          mode: caller.mode,
          organizer: { userId: caller.userId, email: caller.email.toLowerCase() },
          meeting,
          sequence: 1,
          sendInvites,
          occurredAt: meeting.createdAt,
        });
      }),
      { numRuns: 300 },
    );
  });
});
