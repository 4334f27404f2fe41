import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createUserWithKey, expectError, systemPerSuite, WIRINGS } from "../harness.js";

const EVERY_DAY = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"].map((day) => ({ day, start: "09:00", end: "17:00" }));

describe.each(WIRINGS)("scheduling rules end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  /** A user in a zone who works 09:00–17:00 every day, and who trusts the given users. */
  async function person(timezone: string, trusts: string[] = []) {
    const user = await createUserWithKey(suite.url, { timezone });
    expect((await call(suite.url, "PATCH", "/v1/me", { key: user.key, body: { workingHours: EVERY_DAY } })).status).toBe(200);
    for (const email of trusts) expect((await call(suite.url, "POST", "/v1/contacts", { key: user.key, body: { email } })).status).toBe(201);
    return user;
  }

  it.runIf(available)("records time off as whole days or hours in the user's zone, lists and removes it, in its mode only", async () => {
    const ann = await person("Europe/Berlin");
    // 2030-03-31 is the spring-forward Sunday in Berlin: a 23-hour day.
    const day = await call(suite.url, "POST", "/v1/me/time-off", { key: ann.key, body: { start: "2030-03-31", end: "2030-03-31", reason: "  Family  " } });
    expect(day.status).toBe(201);
    expect(day.body).toMatchObject({ start: "2030-03-30T23:00:00Z", end: "2030-03-31T22:00:00Z", reason: "Family" });
    expect(day.body.id).toMatch(/^off_[0-9A-Za-z]{24}$/);
    const hours = await call(suite.url, "POST", "/v1/me/time-off", { key: ann.key, body: { start: "2030-04-02T13:00", end: "2030-04-02T15:00:00+02:00" } });
    expect(hours.status).toBe(201);
    expect(hours.body).toMatchObject({ start: "2030-04-02T11:00:00Z", end: "2030-04-02T13:00:00Z", reason: "" });

    const list = await call(suite.url, "GET", "/v1/me/time-off", { key: ann.key });
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([day.body.id, hours.body.id]);

    expect((await call(suite.url, "GET", "/v1/availability?date=2030-03-31", { key: ann.key })).body.slots).toEqual([{ start: "09:00", end: "17:00", status: "busy" }]);
    expect((await call(suite.url, "GET", "/v1/availability?date=2030-04-02", { key: ann.key })).body.slots).toEqual([
      { start: "09:00", end: "13:00", status: "free" },
      { start: "13:00", end: "15:00", status: "busy" },
      { start: "15:00", end: "17:00", status: "free" },
    ]);

    // Another mode, and another user, see none of it.
    const live = await call(suite.url, "POST", `/admin/v1/users/${ann.userId}/api-keys`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: { mode: "live" } });
    expect((await call(suite.url, "GET", "/v1/me/time-off", { key: live.body.key })).body.data).toEqual([]);
    expect((await call(suite.url, "GET", "/v1/availability?date=2030-03-31", { key: live.body.key })).body.slots).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
    const other = await person("UTC");
    expectError(await call(suite.url, "DELETE", `/v1/me/time-off/${hours.body.id}`, { key: other.key }), 404, "not_found");

    expect((await call(suite.url, "DELETE", `/v1/me/time-off/${hours.body.id}`, { key: ann.key })).status).toBe(204);
    expectError(await call(suite.url, "DELETE", `/v1/me/time-off/${hours.body.id}`, { key: ann.key }), 404, "not_found");
    expectError(await call(suite.url, "DELETE", "/v1/me/time-off/off_bad", { key: ann.key }), 404, "not_found");
    expect((await call(suite.url, "GET", "/v1/availability?date=2030-04-02", { key: ann.key })).body.slots).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
  });

  it.runIf(available)("refuses bad time off naming the field, and asks for the account scopes", async () => {
    const ann = await person("Europe/Berlin");
    const refused = async (body: unknown, param: string) => {
      const res = await call(suite.url, "POST", "/v1/me/time-off", { key: ann.key, body });
      expectError(res, 400, "invalid_request");
      expect(res.body.error.param).toBe(param);
      expect(res.body.error.message).toContain(param);
    };
    await refused({ start: "2030-02-30", end: "2030-03-01" }, "start");
    await refused({ start: "2030-03-01", end: "2030-02-28" }, "end");
    await refused({ start: "2030-03-01T10:00Z", end: "2030-03-01T10:00Z" }, "end");
    await refused({ start: "2030-03-31T02:30", end: "2030-03-31T05:00" }, "start");
    await refused({ start: "2030-01-01", end: "2031-06-01" }, "end");
    await refused({ start: "next week", end: "2031-06-01" }, "start");
    await refused({ start: "2030-03-01", end: "2030-03-02", reason: "x".repeat(501) }, "reason");
    await refused({ start: "2030-03-01", end: "2030-03-02", note: "x" }, "note");
    await refused({ end: "2030-03-02" }, "start");
    expect((await call(suite.url, "GET", "/v1/me/time-off", { key: ann.key })).body.data).toEqual([]);

    const reader = await createUserWithKey(suite.url, { scopes: ["account:read", "meetings:read"] });
    expect((await call(suite.url, "GET", "/v1/me/time-off", { key: reader.key })).status).toBe(200);
    const forbidden = await call(suite.url, "POST", "/v1/me/time-off", { key: reader.key, body: { start: "2030-03-01", end: "2030-03-01" } });
    expectError(forbidden, 403, "forbidden");
    expect(forbidden.body.error.message).toContain("account:write");
    const writer = await createUserWithKey(suite.url, { scopes: ["meetings:write"] });
    expectError(await call(suite.url, "GET", "/v1/me/time-off", { key: writer.key }), 403, "forbidden");
  });

  it.runIf(available)("shows time off to a trusted contact only as busy, never its reason, and keeps recommendations off it", async () => {
    const ann = await person("UTC");
    const bob = await person("Europe/Berlin", [ann.email]);
    expect((await call(suite.url, "POST", "/v1/me/time-off", { key: bob.key, body: { start: "2030-04-03T12:00", end: "2030-04-03T16:00", reason: "Dentist appointment" } })).status).toBe(201);

    const view = await call(suite.url, "GET", `/v1/availability?date=2030-04-03&email=${bob.email}`, { key: ann.key });
    expect(view.status).toBe(200);
    expect(view.body.slots).toEqual([
      { start: "09:00", end: "12:00", status: "free" },
      { start: "12:00", end: "16:00", status: "busy" },
      { start: "16:00", end: "17:00", status: "free" },
    ]);
    expect(JSON.stringify(view.body)).not.toContain("Dentist");

    const recommended = await call(suite.url, "POST", "/v1/availability/recommended", {
      key: ann.key,
      body: { participants: [bob.email], duration: "1 hour", from: "2030-04-03T00:00Z", to: "2030-04-04T00:00Z", limit: 50 },
    });
    expect(recommended.status).toBe(200);
    expect(recommended.body.consideredParticipants).toEqual([bob.email]);
    expect(recommended.body.slots.length).toBeGreaterThan(0);
    for (const slot of recommended.body.slots) expect(slot.end <= "2030-04-03T10:00:00Z" || slot.start >= "2030-04-03T14:00:00Z").toBe(true);
    expect(JSON.stringify(recommended.body)).not.toContain("Dentist");
  });

  it.runIf(available)("lists the meetings overlapping from–to under every filter, page by page", async () => {
    const ann = await person("America/New_York");
    const made: Record<string, string> = {};
    const meeting = async (name: string, startTime: string, duration: string, status?: string) => {
      const res = await call(suite.url, "POST", "/v1/meetings", { key: ann.key, body: { title: name, duration, startTime, participants: ["x@example.com"], ...(status ? { status } : {}) } });
      expect(res.status).toBe(201);
      made[name] = res.body.id;
    };
    // New York is UTC−4 in May 2030: the local day 2030-05-06 is 04:00Z to 04:00Z the next day.
    await meeting("before", "2030-05-05T22:00", "2 hours"); // ends 00:00 local: outside
    await meeting("straddles", "2030-05-05T23:30", "1 hour"); // 23:30–00:30 local: inside
    await meeting("morning", "2030-05-06T09:00", "30 mins");
    await meeting("draft", "2030-05-06T10:00", "30 mins", "draft");
    await meeting("noon", "2030-05-06T12:00", "30 mins");
    await meeting("late", "2030-05-06T23:45", "1 hour"); // starts inside, ends the next day
    await meeting("after", "2030-05-07T00:00", "15 mins"); // starts at the window's end: outside
    const cancelled = await call(suite.url, "PATCH", `/v1/meetings/${made.noon}`, { key: ann.key, body: { status: "cancelled" } });
    expect(cancelled.status).toBe(200);

    const list = async (query: string) => {
      const res = await call(suite.url, "GET", `/v1/meetings?${query}`, { key: ann.key });
      expect(res.status).toBe(200);
      return res.body as { data: { id: string }[]; hasMore: boolean };
    };
    const names = (page: { data: { id: string }[] }) => page.data.map((m) => Object.keys(made).find((k) => made[k] === m.id));
    expect(names(await list("filter=all&from=2030-05-06&to=2030-05-06"))).toEqual(["late", "noon", "draft", "morning", "straddles"]);
    expect(names(await list("filter=upcoming&from=2030-05-06&to=2030-05-06"))).toEqual(["straddles", "morning", "late"]);
    expect(names(await list("filter=draft&from=2030-05-06&to=2030-05-06"))).toEqual(["draft"]);
    expect(names(await list("filter=past&from=2030-05-06&to=2030-05-06"))).toEqual([]);
    expect(names(await list("filter=upcoming&from=2030-05-06T09:15:00-04:00"))).toEqual(["morning", "late", "after"]);
    expect(names(await list("filter=all&to=2030-05-06T09:00"))).toEqual(["straddles", "before"]);

    // Page by page, in the same order and window.
    const first = await list("filter=all&from=2030-05-06&to=2030-05-06&limit=2");
    expect(names(first)).toEqual(["late", "noon"]);
    expect(first.hasMore).toBe(true);
    const second = await list(`filter=all&from=2030-05-06&to=2030-05-06&limit=2&startingAfter=${first.data[1]!.id}`);
    expect(names(second)).toEqual(["draft", "morning"]);
    expect(second.hasMore).toBe(true);
    const third = await list(`filter=all&from=2030-05-06&to=2030-05-06&limit=2&startingAfter=${second.data[1]!.id}`);
    expect(names(third)).toEqual(["straddles"]);
    expect(third.hasMore).toBe(false);

    for (const [query, param] of [
      ["from=2030-02-30", "from"],
      ["to=2030-05-06T24:00", "to"],
      ["from=tomorrow", "from"],
      ["from=2030-05-07&to=2030-05-06", "to"],
      ["from=2030-05-06T10:00Z&to=2030-05-06T10:00Z", "to"],
      ["from=2030-05-06&from=2030-05-07", "from"],
    ] as const) {
      const res = await call(suite.url, "GET", `/v1/meetings?${query}`, { key: ann.key });
      expectError(res, 400, "invalid_request");
      expect(res.body.error.param).toBe(param);
    }
  });

  it.runIf(available)("answers free-busy in UTC for visible people, merged and cut to a daylight-saving day, and names the others", async () => {
    const ann = await person("Europe/Berlin");
    const bob = await person("America/New_York", [ann.email]);
    const carol = await person("UTC");
    const meeting = async (key: string, startTime: string, duration: string, participants: string[], status?: string) =>
      expect((await call(suite.url, "POST", "/v1/meetings", { key, body: { title: "M", duration, startTime, participants, ...(status ? { status } : {}) } })).status).toBe(201);
    await meeting(bob.key, "2030-03-30T22:30:00Z", "1 hour", ["x@example.com"]); // cut at the range's start, 23:00Z
    await meeting(bob.key, "2030-03-31T09:00:00Z", "1 hour", ["x@example.com"]);
    await meeting(ann.key, "2030-03-31T09:30:00Z", "1 hour", [bob.email]); // Bob attends: merges with his own
    await meeting(bob.key, "2030-03-31T13:00:00Z", "1 hour", ["x@example.com"], "draft");
    await meeting(ann.key, "2030-03-31T15:00:00Z", "30 mins", ["y@example.com"]);
    await meeting(carol.key, "2030-03-31T10:00:00Z", "1 hour", ["x@example.com"]);
    expect((await call(suite.url, "POST", "/v1/me/time-off", { key: bob.key, body: { start: "2030-03-31T20:00:00Z", end: "2030-04-01T02:00:00Z", reason: "Late flight" } })).status).toBe(201);

    // 2030-03-31 in Berlin is 23 hours long: 2030-03-30T23:00Z to 2030-03-31T22:00Z.
    const res = await call(suite.url, "POST", "/v1/availability/free-busy", {
      key: ann.key,
      body: { participants: [bob.email.toUpperCase(), carol.email, "nobody@example.com", ann.email, bob.email], from: "2030-03-31", to: "2030-03-31" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      from: "2030-03-30T23:00:00Z",
      to: "2030-03-31T22:00:00Z",
      people: [
        {
          email: bob.email,
          busy: [
            { start: "2030-03-30T23:00:00Z", end: "2030-03-30T23:30:00Z" },
            { start: "2030-03-31T09:00:00Z", end: "2030-03-31T10:30:00Z" },
            { start: "2030-03-31T20:00:00Z", end: "2030-03-31T22:00:00Z" },
          ],
          busyComplete: true,
        },
        { email: ann.email, busy: [{ start: "2030-03-31T09:30:00Z", end: "2030-03-31T10:30:00Z" }, { start: "2030-03-31T15:00:00Z", end: "2030-03-31T15:30:00Z" }], busyComplete: true },
      ],
      notVisible: [carol.email, "nobody@example.com"],
    });
    expect(JSON.stringify(res.body)).not.toContain("Late flight");

    const refused = async (body: unknown, param: string) => {
      const bad = await call(suite.url, "POST", "/v1/availability/free-busy", { key: ann.key, body });
      expectError(bad, 400, "invalid_request");
      expect(bad.body.error.param).toBe(param);
    };
    await refused({ participants: [bob.email], from: "2030-03-01", to: "2030-04-15" }, "to");
    await refused({ participants: [bob.email], from: "2030-03-02", to: "2030-03-01" }, "to");
    await refused({ participants: [bob.email], from: "2030-02-30", to: "2030-03-01" }, "from");
    await refused({ participants: [bob.email], from: "2030-03-01" }, "to");
    await refused({ participants: [], from: "2030-03-01", to: "2030-03-02" }, "participants");
    await refused({ participants: Array.from({ length: 51 }, (_, i) => `p${i}@example.com`), from: "2030-03-01", to: "2030-03-02" }, "participants");
    await refused({ participants: ["not-an-address"], from: "2030-03-01", to: "2030-03-02" }, "participants[0]");
    await refused({ participants: [bob.email], from: "2030-03-01", to: "2030-03-02", timeRange: "any" }, "timeRange");
    const noScope = await createUserWithKey(suite.url, { scopes: ["meetings:read"] });
    expectError(await call(suite.url, "POST", "/v1/availability/free-busy", { key: noScope.key, body: { participants: [bob.email], from: "2030-03-01", to: "2030-03-02" } }), 403, "forbidden");
  });

  it.runIf(available)("recommends around optional people, stated buffers, a minimum notice and a quorum, and says which rule emptied the result", async () => {
    const ann = await person("UTC");
    const bob = await person("UTC", [ann.email]);
    const cy = await person("UTC", [ann.email]);
    const stranger = await person("UTC");
    expect((await call(suite.url, "PATCH", "/v1/me", { key: bob.key, body: { preferences: { bufferMinutes: 60 } } })).status).toBe(200);
    const meeting = async (key: string, startTime: string, duration: string) =>
      expect((await call(suite.url, "POST", "/v1/meetings", { key, body: { title: "M", duration, startTime, participants: ["x@example.com"] } })).status).toBe(201);
    await meeting(bob.key, "2030-04-03T12:00:00Z", "1 hour"); // with Bob's hour of buffer: 11:00–14:00 blocked
    await meeting(cy.key, "2030-04-03T09:00:00Z", "2 hours"); // Cy (optional) is busy 09:00–11:00
    const recommend = (body: Record<string, unknown>) =>
      call(suite.url, "POST", "/v1/availability/recommended", { key: ann.key, body: { participants: [bob.email], duration: "1 hour", from: "2030-04-03T09:00:00Z", to: "2030-04-03T17:00:00Z", limit: 50, ...body } });

    const res = await recommend({ optionalParticipants: [cy.email, stranger.email] });
    expect(res.status).toBe(200);
    expect(res.body.consideredParticipants).toEqual([bob.email]);
    expect(res.body.consideredOptionalParticipants).toEqual([cy.email]);
    expect(res.body.slots.length).toBeGreaterThan(0);
    for (const slot of res.body.slots) {
      expect(slot.end <= "2030-04-03T11:00:00Z" || slot.start >= "2030-04-03T14:00:00Z").toBe(true);
      expect(slot.reason).toContain(cy.email);
      if (slot.start < "2030-04-03T11:00:00Z") {
        expect(slot.availableParticipants).toEqual([ann.email, bob.email]);
        expect(slot.reason).toContain(`${cy.email} cannot`);
      } else {
        expect(slot.availableParticipants).toBeUndefined();
      }
    }
    expect(res.body.slots[0].start >= "2030-04-03T14:00:00Z").toBe(true);

    const quorum = await recommend({ optionalParticipants: [cy.email], minimumAttendees: 3 });
    expect(quorum.body.slots.length).toBeGreaterThan(0);
    for (const slot of quorum.body.slots) expect(slot.start >= "2030-04-03T14:00:00Z").toBe(true);
    expect((await recommend({ optionalParticipants: [cy.email], minimumAttendees: 3, to: "2030-04-03T11:00:00Z" })).body).toMatchObject({ slots: [], emptyReason: "minimum_attendees" });
    expect((await recommend({ from: "2030-04-03T11:00:00Z", to: "2030-04-03T14:00:00Z" })).body).toMatchObject({ slots: [], emptyReason: "buffers" });
    const noticeFrom = new Date(Date.now() + 60 * 60_000).toISOString().slice(0, 16) + "Z";
    const noticeTo = new Date(Date.now() + 3 * 60 * 60_000).toISOString().slice(0, 16) + "Z";
    const notice = await call(suite.url, "POST", "/v1/availability/recommended", {
      key: ann.key,
      body: { participants: [bob.email], duration: "1 hour", timeRange: "any", from: noticeFrom, to: noticeTo, minimumNoticeMinutes: 24 * 60 },
    });
    expect(notice.body).toMatchObject({ slots: [], emptyReason: "minimum_notice" });

    // Recommendations allow 10 a minute per key: the refusals use a key of their own.
    const second = await call(suite.url, "POST", `/admin/v1/users/${ann.userId}/api-keys`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, body: { mode: "test" } });
    const refused = async (body: Record<string, unknown>, param: string) => {
      const bad = await call(suite.url, "POST", "/v1/availability/recommended", { key: second.body.key, body: { participants: [bob.email], duration: "1 hour", ...body } });
      expectError(bad, 400, "invalid_request");
      expect(bad.body.error.param).toBe(param);
    };
    await refused({ optionalParticipants: [bob.email] }, "optionalParticipants[0]");
    await refused({ optionalParticipants: ["nope"] }, "optionalParticipants[0]");
    await refused({ optionalParticipants: Array.from({ length: 100 }, (_, i) => `o${i}@example.com`) }, "optionalParticipants");
    await refused({ minimumAttendees: 0 }, "minimumAttendees");
    await refused({ minimumAttendees: 1.5 }, "minimumAttendees");
    await refused({ minimumNoticeMinutes: -1 }, "minimumNoticeMinutes");
    await refused({ minimumNoticeMinutes: 44_641 }, "minimumNoticeMinutes");
  });
});
