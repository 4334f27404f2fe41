import { describe, expect, it } from "vitest";
import { eventually } from "@sched/testing";
import { call, createUserWithKey, perSuite, WIRINGS } from "../harness.js";
import { attachGoogle, startInvitesWorld } from "../invitesSetup.js";

/** How often the invites read answers back from Google here: often enough for a test to wait on. */
const ANSWERS_POLL_MS = 400;

const eventIdOf = (meetingId: string) => Buffer.from(meetingId).toString("hex");
const startIn = (days: number) => `${new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)}T10:00:00Z`;

describe.each(WIRINGS)("answers read back from Google calendars (%s)", async (wiring) => {
  const suite = await perSuite(wiring, () => startInvitesWorld(wiring, { GOOGLE_ANSWERS_POLL_MS: String(ANSWERS_POLL_MS) }));

  it.runIf(suite.available)("records an attendee's answer Google reports, reading one event list per connection a round", async () => {
    const world = suite.started;
    const org = await createUserWithKey(world.url, { mode: "live" });
    const grant = world.google.grant();
    await attachGoogle(world, org.userId, grant);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Answered G", duration: "30 mins", startTime: startIn(7), participants: ["ga@example.com", "gb@example.com"] } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await eventually(() => world.google.events.get(eventIdOf(id)), 15_000, 50);
    world.google.respond(eventIdOf(id), "ga@example.com", "accepted");
    world.google.respond(eventIdOf(id), "gb@example.com", "tentative");
    const attendees = await eventually(async () => {
      const res = await call(world.url, "GET", `/v1/meetings/${id}`, { key: org.key });
      const byEmail = Object.fromEntries((res.body.attendees as Array<{ email: string; response: string; respondedAt: string | null }>).map((a) => [a.email, a]));
      return byEmail["ga@example.com"]?.response === "accepted" && byEmail["gb@example.com"]?.response === "tentative" ? byEmail : undefined;
    }, 15_000, 100);
    expect(attendees["ga@example.com"]!.respondedAt).not.toBeNull();
    const reads = () => world.google.calendarCalls().filter((c) => c.method === "GET" && c.accessToken === grant.accessToken);
    expect(reads().every((c) => c.path === "/calendar/v3/calendars/primary/events" && c.query.singleEvents === "false")).toBe(true);
    const before = reads().length;
    const since = Date.now();
    await new Promise((r) => setTimeout(r, ANSWERS_POLL_MS * 5));
    expect(reads().length - before).toBeLessThanOrEqual(Math.ceil((Date.now() - since) / ANSWERS_POLL_MS) + 1);
  });
});
