import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { weekdayIn } from "../days.js";
import { call, createUserWithKey, expectError, systemPerSuite, WIRINGS } from "../harness.js";

const inDays = (days: number, hour = 10) => DateTime.utc().plus({ days }).set({ hour, minute: 0, second: 0, millisecond: 0 }).toISO({ suppressMilliseconds: true })!;

describe.each(WIRINGS)("meetings end to end (%s)", async (wiring) => {
  const suite = await systemPerSuite(wiring);
  const { available } = suite;

  it.runIf(available)("creates, reads, lists and updates a meeting; participants see it, others do not", async () => {
    const org = await createUserWithKey(suite.url, { timezone: "Europe/Berlin" });
    const guest = await createUserWithKey(suite.url);
    const outsider = await createUserWithKey(suite.url);
    const created = await call(suite.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "  Planning  ", duration: "1 hour", startTime: "2030-03-04T10:00:00", participants: [guest.email.toUpperCase(), "x@example.com", guest.email] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      title: "Planning",
      description: "",
      startTime: "2030-03-04T09:00:00Z",
      duration: "1 hour",
      participants: [guest.email, "x@example.com"],
      status: "confirmed",
      organizer: org.email,
    });
    expect(created.body.id).toMatch(/^mtg_[0-9A-Za-z]{24}$/);
    const id = created.body.id as string;

    expect((await call(suite.url, "GET", `/v1/meetings/${id}`, { key: guest.key })).body).toEqual(created.body);
    expectError(await call(suite.url, "GET", `/v1/meetings/${id}`, { key: outsider.key }), 404, "not_found");
    const guestList = await call(suite.url, "GET", "/v1/meetings", { key: guest.key });
    expect(guestList.body.data.map((m: { id: string }) => m.id)).toEqual([id]);
    expect(guestList.body.data[0]).not.toHaveProperty("description");
    expect(guestList.body.data[0]).not.toHaveProperty("createdAt");

    expectError(await call(suite.url, "PATCH", `/v1/meetings/${id}`, { key: guest.key, body: { title: "Mine" } }), 403, "forbidden");
    expectError(await call(suite.url, "PATCH", `/v1/meetings/${id}`, { key: outsider.key, body: { title: "Mine" } }), 404, "not_found");
    const moved = await call(suite.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { startTime: "2030-03-05T08:30:00Z", participants: ["x@example.com"] } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ startTime: "2030-03-05T08:30:00Z", participants: ["x@example.com"], title: "Planning" });
    expectError(await call(suite.url, "GET", `/v1/meetings/${id}`, { key: guest.key }), 404, "not_found");
  });

  it.runIf(available)("refuses updates to ended and cancelled meetings, and bad bodies, with the right codes", async () => {
    const org = await createUserWithKey(suite.url);
    const past = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Old", duration: "15 mins", startTime: inDays(-2), participants: ["p@example.com"] } });
    expect(past.status).toBe(201);
    expectError(await call(suite.url, "PATCH", `/v1/meetings/${past.body.id}`, { key: org.key, body: { title: "New" } }), 400, "meeting_ended");
    const soon = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Soon", duration: "30 mins", startTime: inDays(3), participants: ["p@example.com"] } });
    expect((await call(suite.url, "PATCH", `/v1/meetings/${soon.body.id}`, { key: org.key, body: { status: "cancelled" } })).body.status).toBe("cancelled");
    expectError(await call(suite.url, "PATCH", `/v1/meetings/${soon.body.id}`, { key: org.key, body: { title: "Again" } }), 400, "meeting_cancelled");

    const badDuration = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "x", duration: "20 mins", startTime: inDays(1), participants: ["p@example.com"] } });
    expectError(badDuration, 400, "invalid_request");
    expect(badDuration.body.error.param).toBe("duration");
    const badEmail = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "x", duration: "15 mins", startTime: inDays(1), participants: ["p@example.com", "nope"] } });
    expect(badEmail.body.error.param).toBe("participants[1]");
    const badDate = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "x", duration: "15 mins", startTime: "2030-02-30T10:00:00Z", participants: ["p@example.com"] } });
    expectError(badDate, 400, "invalid_request");
    expect(badDate.body.error.param).toBe("startTime");
    expectError(await call(suite.url, "GET", "/v1/meetings?limit=101", { key: org.key }), 400, "invalid_request");
    expectError(await call(suite.url, "GET", "/v1/meetings?filter=soon", { key: org.key }), 400, "invalid_request");
    expectError(await call(suite.url, "GET", "/v1/meetings/mtg_nope", { key: org.key }), 404, "not_found");
  });

  it.runIf(available)("removes a meeting, ended or not, for its organizer only: then 404, out of every list and of busy time", async () => {
    const org = await createUserWithKey(suite.url, { timezone: "UTC" });
    const guest = await createUserWithKey(suite.url, { timezone: "UTC" });
    const outsider = await createUserWithKey(suite.url);
    const create = async (title: string, startTime: string) => {
      const res = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title, duration: "1 hour", startTime, participants: [guest.email] } });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const ended = await create("Mistake in the past", inDays(-2));
    // A weekday, so the day view below shows its working hours.
    const day = weekdayIn(2);
    const upcoming = await create("Mistake ahead", `${day}T13:00:00Z`);
    const kept = await create("Kept", `${day}T09:00:00Z`);

    expectError(await call(suite.url, "DELETE", `/v1/meetings/${upcoming}`, { key: guest.key }), 403, "forbidden");
    expectError(await call(suite.url, "DELETE", `/v1/meetings/${upcoming}`, { key: outsider.key }), 404, "not_found");
    expectError(await call(suite.url, "DELETE", `/v1/meetings/${upcoming}?sendInvites=maybe`, { key: org.key }), 400, "invalid_request");
    expectError(await call(suite.url, "DELETE", "/v1/meetings/mtg_missing", { key: org.key }), 404, "not_found");

    for (const id of [ended, upcoming]) {
      const removed = await call(suite.url, "DELETE", `/v1/meetings/${id}`, { key: org.key });
      expect(removed.status).toBe(204);
      expect(removed.body).toBeUndefined();
      expectError(await call(suite.url, "GET", `/v1/meetings/${id}`, { key: org.key }), 404, "not_found");
      expectError(await call(suite.url, "GET", `/v1/meetings/${id}`, { key: guest.key }), 404, "not_found");
      expectError(await call(suite.url, "DELETE", `/v1/meetings/${id}`, { key: org.key }), 404, "not_found");
    }
    for (const who of [org, guest]) {
      const all = await call(suite.url, "GET", "/v1/meetings?filter=all", { key: who.key });
      expect(all.body.data.map((m: { id: string }) => m.id)).toEqual([kept]);
    }
    const view = await call(suite.url, "GET", `/v1/availability?date=${day}`, { key: guest.key });
    expect(view.body.slots.filter((s: { status: string }) => s.status === "busy")).toEqual([{ start: "09:00", end: "10:00", status: "busy" }]);
  });

  it.runIf(available)("sends a list as compact UTF-8 JSON with its type and length, as every other answer, and HEAD the headers alone", async () => {
    const org = await createUserWithKey(suite.url);
    const title = 'Q4 "plan" \\ back\\slash\ttab\nnew line \u2028 \u00e9t\u00e9 \ud83d\udcc5 </script>';
    const made = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title, duration: "30 mins", startTime: inDays(2), participants: ["a@example.com"] } });
    const authorization = `Bearer ${org.key}`;
    const res = await fetch(`${suite.url}/v1/meetings`, { headers: { authorization } });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
    const text = bytes.toString("utf8");
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    expect(JSON.parse(text)).toEqual({ data: [{ ...made.body, description: undefined, createdAt: undefined, attendees: undefined }].map((m) => JSON.parse(JSON.stringify(m))), hasMore: false });

    const head = await fetch(`${suite.url}/v1/meetings`, { method: "HEAD", headers: { authorization } });
    expect([head.status, head.headers.get("content-type"), head.headers.get("content-length")]).toEqual([200, "application/json; charset=utf-8", String(bytes.length)]);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it.runIf(available)("walks a list in pages with startingAfter, without gaps or repeats", async () => {
    const org = await createUserWithKey(suite.url);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const m = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: `M${i}`, duration: "15 mins", startTime: inDays(1 + i), participants: ["p@example.com"] } });
      ids.push(m.body.id);
    }
    const walked: string[] = [];
    let cursor = "";
    for (;;) {
      const page = await call(suite.url, "GET", `/v1/meetings?limit=3${cursor}`, { key: org.key });
      expect(page.status).toBe(200);
      walked.push(...page.body.data.map((m: { id: string }) => m.id));
      if (!page.body.hasMore) break;
      cursor = `&startingAfter=${walked.at(-1)}`;
    }
    expect(walked).toEqual(ids);
  });

  it.runIf(available)("replays an idempotent create through the gateway, and refuses a reused key", async () => {
    const org = await createUserWithKey(suite.url);
    const body = { title: "Once", duration: "45 mins", startTime: inDays(5), participants: ["p@example.com"] };
    const headers = { "Idempotency-Key": `idem-${Date.now()}` };
    const [a, b] = await Promise.all([call(suite.url, "POST", "/v1/meetings", { key: org.key, body, headers }), call(suite.url, "POST", "/v1/meetings", { key: org.key, body, headers })]);
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(201);
    expect([201, 409]).toContain(statuses[1]);
    const replay = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.id).toBe(a.status === 201 ? a.body.id : b.body.id);
    expectError(await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { ...body, title: "Other" }, headers }), 422, "idempotency_key_reused");
    expect((await call(suite.url, "GET", "/v1/meetings?filter=all", { key: org.key })).body.data).toHaveLength(1);
  });
});
