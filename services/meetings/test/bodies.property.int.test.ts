import { DURATIONS, Meeting, MEETING_STATUSES } from "@sched/proto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, created, hoursFromNow, newCaller, startMeetings, type Answer, type TestMeetings } from "./harness.js";

let h: TestMeetings;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  h = await startMeetings();
  api = client(h.bus);
});
afterAll(async () => h?.close());

/** Mostly the right kind of value, sometimes any JSON at all. */
const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 14, arbitrary: valid }, { weight: 1, arbitrary: fc.jsonValue() });
/** Mostly a good value, sometimes one near the edge of what is allowed. */
const goodOrEdgy = <T, U>(good: fc.Arbitrary<T>, edgy: fc.Arbitrary<U>) => fc.oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: edgy });

const codeUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 });
const text = goodOrEdgy(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), codeUnits, fc.constant("   "), fc.string({ minLength: 195, maxLength: 205 })),
);

const pad = (n: number, width: number) => String(n).padStart(width, "0");
/** Datetimes near the edges: impossible days and hours, fractions, every offset form, years out of range. */
const edgyStartTime = fc
  .record({
    year: fc.oneof(fc.integer({ min: 2020, max: 2040 }), fc.integer({ min: 0, max: 9999 })),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.option(fc.integer({ min: 0, max: 61 }), { nil: undefined }),
    fraction: fc.option(fc.stringMatching(/^[.,]\d{1,9}$/), { nil: undefined }),
    offset: fc.oneof(fc.constant(""), fc.constant("Z"), fc.stringMatching(/^[+-]\d{2}(:?\d{2})?$/)),
  })
  .map(({ year, month, day, hour, minute, second, fraction, offset }) => {
    const secs = second === undefined ? "" : `:${pad(second, 2)}${fraction ?? ""}`;
    return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hour, 2)}:${pad(minute, 2)}${secs}${offset}`;
  });
const goodStartTime = fc
  .tuple(fc.date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2040-01-01T00:00:00Z"), noInvalidDate: true }), fc.constantFrom("Z", "", "+05:30", "-08:00"))
  .map(([d, offset]) => d.toISOString().replace("Z", offset));
const startTime = goodOrEdgy(goodStartTime, edgyStartTime);

const goodEmail = fc.stringMatching(/^[a-z0-9]{1,8}(\.[a-z0-9]{1,5})?@[a-z]{1,8}\.(com|org|io)$/);
const email = goodOrEdgy(goodEmail, fc.oneof(fc.emailAddress(), fc.constantFrom("A@Example.com", "not-an-email", " b@example.com "), fc.string({ maxLength: 10 })));
const participants = goodOrEdgy(fc.array(email, { minLength: 1, maxLength: 6 }), fc.oneof(fc.constant([]), fc.array(goodEmail, { minLength: 95, maxLength: 105 })));
const duration = goodOrEdgy(fc.constantFrom(...DURATIONS), fc.constantFrom("20 mins", "1 Hour", "2 hours ", ""));
const status = goodOrEdgy(fc.constantFrom(...MEETING_STATUSES), fc.string({ maxLength: 8 }));
const extra = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 1 });

const createFields = {
  title: field(text),
  description: field(goodOrEdgy(text, fc.string({ minLength: 9_995, maxLength: 10_005 }))),
  duration: field(duration),
  startTime: field(startTime),
  participants: field(participants),
  sendInvites: field(fc.boolean()),
  status: field(status),
};
const createBody = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue() },
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.oneof(
          { weight: 4, arbitrary: fc.record(createFields, { requiredKeys: ["title", "duration", "startTime", "participants"] }) },
          { weight: 1, arbitrary: fc.record(createFields, { requiredKeys: [] }) },
        ),
        fc.oneof({ weight: 8, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extra }),
      )
      .map(([body, more]) => ({ ...more, ...body })),
  },
);

const updateBody = fc.oneof(
  { weight: 1, arbitrary: fc.jsonValue() },
  {
    weight: 8,
    arbitrary: fc.record(
      {
        title: field(text),
        description: field(text),
        duration: field(duration),
        startTime: field(startTime),
        participants: field(participants),
        sendInvites: field(fc.boolean()),
        status: field(status),
      },
      { requiredKeys: [] },
    ),
  },
);

const zones = fc.constantFrom("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham");

/** A success that GET returns unchanged, or a 400 in the error envelope; never anything else. */
async function expectRoundTripOr400(answer: Answer, expectedStatus: number, caller: Parameters<typeof api.get>[0]) {
  if (answer.status === expectedStatus) {
    expect(() => Meeting.parse(answer.body)).not.toThrow();
    const fetched = await api.get(caller, answer.body.id);
    expect(fetched).toEqual({ status: 200, body: answer.body, headers: {} });
    return;
  }
  expect(answer.status).toBe(400);
  expect(answer.body.error.code).toBe("invalid_request");
  expect(typeof answer.body.error.message).toBe("string");
  expect(answer.body.error.message.length).toBeGreaterThan(0);
}

describe("any JSON body", () => {
  it("to create gives 201 with a meeting GET returns unchanged, or a 400 with the envelope", async () => {
    let createdCount = 0;
    let refusedCount = 0;
    await fc.assert(
      fc.asyncProperty(createBody, zones, async (body, timezone) => {
        const caller = newCaller({ timezone });
        const answer = await api.create(caller, body);
        if (answer.status === 201) createdCount += 1;
        else refusedCount += 1;
        await expectRoundTripOr400(answer, 201, caller);
      }),
      { numRuns: 400 },
    );
    // The generator must reach both outcomes for the property to mean anything;
    // about one body in ten is valid, so 20 leaves a wide margin for chance.
    expect(createdCount).toBeGreaterThan(20);
    expect(refusedCount).toBeGreaterThan(20);
  });

  it("to update gives 200 with a meeting GET returns unchanged, or a 400 with the envelope", async () => {
    let updatedCount = 0;
    await fc.assert(
      fc.asyncProperty(updateBody, zones, fc.constantFrom("draft", "confirmed"), async (body, timezone, initial) => {
        const caller = newCaller({ timezone });
        const meeting = await created(h.bus, caller, { startTime: hoursFromNow(72), status: initial, participants: ["p@example.com"] });
        const answer = await api.update(caller, meeting.id, body);
        if (answer.status === 200) updatedCount += 1;
        await expectRoundTripOr400(answer, 200, caller);
      }),
      { numRuns: 250 },
    );
    expect(updatedCount).toBeGreaterThan(25);
  });
});
