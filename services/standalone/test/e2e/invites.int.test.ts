import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "@sched/testing";
import { call, createUserWithKey, expectError } from "../harness.js";
import { attachGoogle, parseInvite, startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";

type Invite = { email: string; kind: string; sequence: number; state: string; channel: string; attempts: number; lastError: string | null };

async function invitesOf(world: InvitesWorld, key: string, meetingId: string): Promise<Invite[]> {
  const res = await call(world.url, "GET", `/v1/meetings/${meetingId}/invites`, { key });
  expect(res.status).toBe(200);
  return res.body.data as Invite[];
}

/** Waits until every listed invite of the meeting has left `pending` and there are `count` of them. */
async function settledInvites(world: InvitesWorld, key: string, meetingId: string, count: number, sequence?: number): Promise<Invite[]> {
  return eventually(async () => {
    const data = await invitesOf(world, key, meetingId);
    const done = data.length === count && data.every((i) => i.state !== "pending" && (sequence === undefined || i.sequence === sequence));
    return done ? data : undefined;
  }, 8_000, 50);
}

describe("invites end to end (standalone)", () => {
  let world: InvitesWorld;

  beforeAll(async () => {
    world = await startInvitesWorld("standalone");
  });
  afterAll(async () => world?.stop());

  it("e-mails an iCalendar invite to each participant, updates with a higher SEQUENCE, and cancels removed ones", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const created = await call(world.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "Design review", description: "Bring sketches", duration: "45 mins", startTime: "2031-05-06T09:15:00+02:00", participants: ["ann@example.com", "bob@example.com"] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const first = await settledInvites(world, org.key, id, 2);
    expect(first.map((i) => [i.email, i.kind, i.state, i.channel, i.sequence])).toEqual([
      ["ann@example.com", "request", "sent", "email", 1],
      ["bob@example.com", "request", "sent", "email", 1],
    ]);
    for (const who of ["ann@example.com", "bob@example.com"]) {
      const mails = world.smtp.to(who);
      expect(mails).toHaveLength(1);
      const invite = parseInvite(mails[0]!.ics!);
      expect(invite).toMatchObject({ method: "REQUEST", uid: `${id}@sched.invalid`, sequence: 1, summary: "Design review", start: "2031-05-06T07:15:00Z", end: "2031-05-06T08:00:00Z", organizer: org.email });
      expect(invite.attendees.sort()).toEqual(["ann@example.com", "bob@example.com"]);
    }

    const patched = await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { title: "Design review v2", participants: ["ann@example.com", "cy@example.com"] } });
    expect(patched.status).toBe(200);
    const second = await settledInvites(world, org.key, id, 3, 2);
    expect(second.map((i) => [i.email, i.kind, i.state])).toEqual([
      ["ann@example.com", "request", "sent"],
      ["bob@example.com", "cancel", "sent"],
      ["cy@example.com", "request", "sent"],
    ]);
    const update = parseInvite(world.smtp.to("ann@example.com")[1]!.ics!);
    expect(update).toMatchObject({ method: "REQUEST", uid: `${id}@sched.invalid`, sequence: 2, summary: "Design review v2" });
    expect(update.attendees.sort()).toEqual(["ann@example.com", "cy@example.com"]);
    const removal = parseInvite(world.smtp.to("bob@example.com")[1]!.ics!);
    expect(removal).toMatchObject({ method: "CANCEL", uid: `${id}@sched.invalid`, sequence: 2, attendees: ["bob@example.com"] });

    expect((await call(world.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { status: "cancelled" } })).status).toBe(200);
    // Bob was told at sequence 2; the cancellation goes to the current participants.
    const third = await eventually(async () => {
      const data = await invitesOf(world, org.key, id);
      return data.filter((i) => i.sequence === 3 && i.state === "sent").length === 2 ? data : undefined;
    }, 8_000);
    expect(third.map((i) => [i.email, i.kind, i.sequence])).toEqual([
      ["ann@example.com", "cancel", 3],
      ["bob@example.com", "cancel", 2],
      ["cy@example.com", "cancel", 3],
    ]);
    const cancelled = await eventually(() => {
      const mails = world.smtp.to("cy@example.com");
      return mails.length === 2 ? parseInvite(mails[1]!.ics!) : undefined;
    });
    expect(cancelled).toMatchObject({ method: "CANCEL", status: "CANCELLED", sequence: 3, uid: `${id}@sched.invalid` });
    expect(world.smtp.to("ann@example.com")).toHaveLength(3);
    expect(world.smtp.to("bob@example.com")).toHaveLength(2);
  });

  it("records test-mode invites as simulated and reaches neither server", async () => {
    const org = await createUserWithKey(world.url, { mode: "test" });
    await attachGoogle(world, org.userId, world.google.grant());
    const mailsBefore = world.smtp.messages.length;
    const googleBefore = world.google.calls.length;
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Dry run", duration: "30 mins", startTime: "2031-01-01T10:00:00Z", participants: ["t1@example.com", "t2@example.com"] } });
    const invites = await settledInvites(world, org.key, created.body.id, 2);
    expect(invites.map((i) => [i.email, i.state, i.channel])).toEqual([
      ["t1@example.com", "simulated", "google"],
      ["t2@example.com", "simulated", "google"],
    ]);
    await call(world.url, "PATCH", `/v1/meetings/${created.body.id}`, { key: org.key, body: { title: "Dry run 2" } });
    await settledInvites(world, org.key, created.body.id, 2, 2);
    const day = await call(world.url, "GET", "/v1/availability?date=2031-01-01", { key: org.key });
    expect(day.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(world.smtp.messages.length).toBe(mailsBefore);
    expect(world.google.calls.length).toBe(googleBefore);
  });

  it("shows invites only to those who may see the meeting, and needs meetings:read", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    const guest = await createUserWithKey(world.url, { mode: "live" });
    const outsider = await createUserWithKey(world.url, { mode: "live" });
    const noScope = await createUserWithKey(world.url, { mode: "live", scopes: ["meetings:write"] });
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Private", duration: "15 mins", startTime: "2031-02-01T10:00:00Z", participants: [guest.email] } });
    const id = created.body.id as string;
    expect((await settledInvites(world, guest.key, id, 1))[0]).toMatchObject({ email: guest.email, state: "sent" });
    expectError(await call(world.url, "GET", `/v1/meetings/${id}/invites`, { key: outsider.key }), 404, "not_found");
    expectError(await call(world.url, "GET", "/v1/meetings/mtg_doesnotexist/invites", { key: org.key }), 404, "not_found");
    expectError(await call(world.url, "GET", `/v1/meetings/${id}/invites`, { key: noScope.key }), 403, "forbidden");
    const silent = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Quiet", duration: "15 mins", startTime: "2031-02-01T11:00:00Z", participants: [guest.email], sendInvites: false } });
    await new Promise((r) => setTimeout(r, 200));
    expect(await invitesOf(world, org.key, silent.body.id)).toEqual([]);
  });

  it("keeps a refused address as failed with the reason, and still delivers to the others", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    world.smtp.refuse("nobody@example.com", 550);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Partly", duration: "15 mins", startTime: "2031-03-01T10:00:00Z", participants: ["nobody@example.com", "somebody@example.com"] } });
    const invites = await settledInvites(world, org.key, created.body.id, 2);
    expect(invites.map((i) => [i.email, i.state])).toEqual([
      ["nobody@example.com", "failed"],
      ["somebody@example.com", "sent"],
    ]);
    expect(invites[0]!.lastError).toMatch(/SMTP/);
    expect(world.smtp.to("somebody@example.com")).toHaveLength(1);
  });

  it("retries an SMTP server that says try later, then delivers once", async () => {
    const org = await createUserWithKey(world.url, { mode: "live" });
    world.smtp.refuse("later@example.com", 451);
    const created = await call(world.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Later", duration: "15 mins", startTime: "2031-03-02T10:00:00Z", participants: ["later@example.com"] } });
    const retrying = await eventually(async () => {
      const [invite] = await invitesOf(world, org.key, created.body.id);
      return invite && invite.attempts >= 2 ? invite : undefined;
    });
    expect(retrying).toMatchObject({ state: "pending" });
    expect(retrying.lastError).toMatch(/SMTP/);
    world.smtp.refuse("later@example.com", undefined);
    const [sent] = await settledInvites(world, org.key, created.body.id, 1);
    expect(sent).toMatchObject({ state: "sent", lastError: null });
    expect(world.smtp.to("later@example.com")).toHaveLength(1);
  });
});
