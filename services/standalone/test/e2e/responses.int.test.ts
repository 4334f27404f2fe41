import { eventually } from "@sched/testing";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call, createUserWithKey, WIRINGS } from "../harness.js";
import { parseInvite } from "../invitesSetup.js";
import { INBOUND_DOMAIN, itipReply, mailReply as mailReplyTo, replySuite } from "../replyMail.js";

describe.each(WIRINGS)("answers to e-mail invites (%s)", async (wiring) => {
  const { suite, world: worldOf, port } = await replySuite(wiring);

  const mailReply = (to: string, from: string, ics: string | { raw: string }) => mailReplyTo(port(), to, from, ics);

  const attendeesOf = async (key: string, id: string) => {
    const res = await call(suite.url, "GET", `/v1/meetings/${id}`, { key });
    expect(res.status).toBe(200);
    return Object.fromEntries((res.body.attendees as { email: string; response: string; respondedAt: string | null }[]).map((a) => [a.email, a]));
  };

  /** The invite one participant received: where to reply, and the calendar to answer. */
  const inviteTo = async (email: string) => {
    const mail = await eventually(() => worldOf().smtp.to(email)[0], 10_000);
    const replyTo = mail.mail.replyTo?.value[0]?.address;
    if (!replyTo) throw new Error("the invite has no Reply-To");
    return { replyTo, invite: parseInvite(mail.ics!) };
  };

  it.runIf(suite.available)("an attendee's calendar client accepts by e-mail, then declines: the API shows it, and a declined meeting is not their busy time", async () => {
    const org = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    const bob = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    const ann = `ann-${randomBytes(4).toString("hex")}@example.com`;
    const day = "2031-05-07";
    const created = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Roadmap", duration: "1 hour", startTime: `${day}T10:00:00Z`, participants: [bob.email, ann] } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body.attendees).toEqual([
      { email: bob.email, response: "needsAction", respondedAt: null },
      { email: ann, response: "needsAction", respondedAt: null },
    ]);

    const { replyTo, invite } = await inviteTo(bob.email);
    expect(replyTo).toMatch(new RegExp(`^reply-[0-9a-f]{32}@${INBOUND_DOMAIN.replace(/\./g, "\\.")}$`));
    // Clients (Gmail, Outlook, Apple Calendar) mail their REPLY to the ORGANIZER: it is the reply address, the organizer named beside it.
    expect(invite.organizer).toBe(replyTo);
    expect(worldOf().smtp.to(bob.email)[0]!.ics!.replace(/\r\n /g, "")).toContain(`ORGANIZER;CN="${org.email}":mailto:${replyTo}`);
    expect((await inviteTo(ann)).replyTo).not.toBe(replyTo);
    const answer = (partstat: string, organizer = invite.organizer) => itipReply({ uid: invite.uid, sequence: invite.sequence, organizer, attendee: bob.email, partstat, start: invite.start, end: invite.end });

    const busyBefore = await call(suite.url, "GET", `/v1/availability?date=${day}`, { key: bob.key });
    expect(busyBefore.body.slots).toContainEqual({ start: "10:00", end: "11:00", status: "busy" });

    const sentAt = Date.now();
    await mailReply(replyTo, bob.email, answer("ACCEPTED"));
    const accepted = await eventually(async () => {
      const attendees = await attendeesOf(org.key, id);
      return attendees[bob.email]?.response === "accepted" ? attendees : undefined;
    }, 5_000, 50);
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    expect(accepted[bob.email]!.respondedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(accepted[ann]).toEqual({ email: ann, response: "needsAction", respondedAt: null });
    // The attendee sees their own answer too, and the invites list carries it.
    expect((await attendeesOf(bob.key, id))[bob.email]!.response).toBe("accepted");
    const invites = await call(suite.url, "GET", `/v1/meetings/${id}/invites`, { key: org.key });
    expect(invites.body.data.find((i: { email: string }) => i.email === bob.email)).toMatchObject({ response: "accepted", respondedAt: accepted[bob.email]!.respondedAt });

    // A later answer (DTSTAMP a second on) replaces it.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // A client that names the organizer's own address (as invites sent before the reply address was the ORGANIZER do) is heard as well.
    await mailReply(replyTo, bob.email, answer("DECLINED", org.email));
    await eventually(async () => ((await attendeesOf(org.key, id))[bob.email]?.response === "declined" ? true : undefined), 5_000, 50);
    const busyAfter = await call(suite.url, "GET", `/v1/availability?date=${day}`, { key: bob.key });
    expect(busyAfter.body.slots).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
    // Declined, the meeting stays in their calendar.
    const list = await call(suite.url, "GET", `/v1/meetings?filter=all`, { key: bob.key });
    expect(list.body.data.map((m: { id: string }) => m.id)).toContain(id);
    // The organizer still counts it as busy.
    const orgDay = await call(suite.url, "GET", `/v1/availability?date=${day}`, { key: org.key });
    expect(orgDay.body.slots).toContainEqual({ start: "10:00", end: "11:00", status: "busy" });

    // Each answer is one meeting.response_updated event, written with it for the bus.
    const events = (await worldOf().sys.system.database("meetings")("outbox").where("subject", "like", "%meeting.response_updated").select("payload")) as { payload: { meetingId: string; attendee: { email: string; response: string }; previousResponse: string; source: string } }[];
    expect(events.map((e) => e.payload).filter((p) => p.meetingId === id).map((p) => [p.attendee.email, p.previousResponse, p.attendee.response, p.source])).toEqual([
      [bob.email, "needsAction", "accepted", "email"],
      [bob.email, "accepted", "declined", "email"],
    ]);

    // The organizer's public events: the meeting, each invite sent, then each answer with the earlier one.
    type Listed = { type: string; mode: string; data: { object: { id?: string; meetingId?: string; email?: string; state?: string; attendees?: { email: string; response: string }[] }; previous?: { attendees?: { email: string; response: string }[] } } };
    const ofMeeting = await eventually(async () => {
      const res = await call(suite.url, "GET", "/v1/events?limit=100", { key: org.key });
      const mine = (res.body.data as Listed[]).filter((e) => (e.data.object.id ?? e.data.object.meetingId) === id).reverse();
      return mine.filter((e) => e.type === "meeting.response_updated").length === 2 && mine;
    }, 30_000, 250);
    expect(ofMeeting.every((e) => e.mode === "live")).toBe(true);
    expect(ofMeeting[0]!.type).toBe("meeting.created");
    const sent = ofMeeting.filter((e) => e.type === "invite.sent");
    expect(sent.map((e) => [e.data.object.email, e.data.object.state]).sort()).toEqual([[ann, "sent"], [bob.email, "sent"]].sort());
    const answers = ofMeeting.filter((e) => e.type === "meeting.response_updated");
    expect(answers.map((e) => [e.data.object.attendees!.find((a) => a.email === bob.email)!.response, e.data.previous])).toEqual([
      ["accepted", { attendees: [{ email: bob.email, response: "needsAction", respondedAt: null }] }],
      ["declined", { attendees: [{ email: bob.email, response: "accepted", respondedAt: accepted[bob.email]!.respondedAt }] }],
    ]);
    expect(answers[1]!.data.object).toEqual((await call(suite.url, "GET", `/v1/meetings/${id}`, { key: org.key })).body);
  });

  it.runIf(suite.available)("a reply to the time before a change of time is not applied; one to the new time is, and still is after a change of title", async () => {
    const org = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    const dee = `dee-${randomBytes(4).toString("hex")}@example.com`;
    const created = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Moved", duration: "30 mins", startTime: "2031-05-09T13:00:00Z", participants: [dee] } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const { replyTo, invite: first } = await inviteTo(dee);
    expect(first.sequence).toBe(1);
    expect((await call(suite.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { startTime: "2031-05-09T15:00:00Z" } })).status).toBe(200);
    const moved = parseInvite((await eventually(() => worldOf().smtp.to(dee)[1], 10_000)).ics!);
    expect(moved.sequence).toBe(2);
    const reply = (invite: typeof first, partstat: string) => itipReply({ uid: invite.uid, sequence: invite.sequence, organizer: invite.organizer, attendee: dee, partstat, start: invite.start, end: invite.end });

    // Her client answers the invitation to 13:00 late, after the meeting moved: she accepted a time it no longer has.
    await mailReply(replyTo, dee, reply(first, "ACCEPTED"));
    expect((await attendeesOf(org.key, id))[dee]).toEqual({ email: dee, response: "needsAction", respondedAt: null });

    await mailReply(replyTo, dee, reply(moved, "TENTATIVE"));
    expect((await attendeesOf(org.key, id))[dee]!.response).toBe("tentative");

    // A new title asks nobody again: an answer to the 15:00 version still counts.
    expect((await call(suite.url, "PATCH", `/v1/meetings/${id}`, { key: org.key, body: { title: "Moved, renamed" } })).status).toBe(200);
    await eventually(() => worldOf().smtp.to(dee)[2], 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await mailReply(replyTo, dee, reply(moved, "DECLINED"));
    expect((await attendeesOf(org.key, id))[dee]!.response).toBe("declined");
  });

  it.runIf(suite.available)("forged, misdirected and malformed replies change nothing", async () => {
    const org = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    const bob = `bob-${randomBytes(4).toString("hex")}@example.com`;
    const cy = `cy-${randomBytes(4).toString("hex")}@example.com`;
    const created = await call(suite.url, "POST", "/v1/meetings", { key: org.key, body: { title: "Budget", duration: "30 mins", startTime: "2031-05-08T13:00:00Z", participants: [bob, cy] } });
    const id = created.body.id as string;
    const toBob = await inviteTo(bob);
    const toCy = await inviteTo(cy);
    const reply = (attendee: string, overrides: { organizer?: string; uid?: string } = {}) =>
      itipReply({ uid: overrides.uid ?? toBob.invite.uid, sequence: 1, organizer: overrides.organizer ?? toBob.invite.organizer, attendee, partstat: "ACCEPTED", start: toBob.invite.start, end: toBob.invite.end });

    // A guessed address, another attendee's address, a forged organizer, another invite's reply address as organizer, another meeting, a non-REPLY, no calendar at all.
    await mailReply(`reply-${randomBytes(16).toString("hex")}@${INBOUND_DOMAIN}`, bob, reply(bob));
    await mailReply(toCy.replyTo, bob, reply(bob));
    await mailReply(toBob.replyTo, bob, reply(bob, { organizer: "mallory@example.com" }));
    await mailReply(toBob.replyTo, bob, reply(bob, { organizer: toCy.replyTo }));
    await mailReply(toBob.replyTo, bob, reply(bob, { uid: `mtg_${"x".repeat(24)}@sched.invalid` }));
    await mailReply(toBob.replyTo, bob, { raw: reply(bob).replace("METHOD:REPLY", "METHOD:REQUEST") });
    await mailReply(toBob.replyTo, bob, { raw: "BEGIN:VCALENDAR\r\nMETHOD:REPLY\r\nBEGIN:VEVENT\r\nUID:broken" });
    // Mail for anything but a reply address is refused outright.
    await expect(mailReply(`postmaster@${INBOUND_DOMAIN}`, bob, reply(bob))).rejects.toThrow(/550/);

    // The listener answers each message only after acting on it: nothing has changed.
    const after = await attendeesOf(org.key, id);
    expect(after[bob]).toEqual({ email: bob, response: "needsAction", respondedAt: null });
    expect(after[cy]).toEqual({ email: cy, response: "needsAction", respondedAt: null });

    // The real one still works afterwards.
    await mailReply(toCy.replyTo, cy, itipReply({ uid: toCy.invite.uid, sequence: 1, organizer: toCy.invite.organizer, attendee: cy, partstat: "TENTATIVE", start: toCy.invite.start, end: toCy.invite.end }));
    const answered = await attendeesOf(org.key, id);
    expect(answered[cy]!.response).toBe("tentative");
    expect(answered[bob]!.response).toBe("needsAction");
  });
});
