import { eventually } from "@sched/testing";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { call, createUserWithKey, WIRINGS } from "../harness.js";
import { parseInvite } from "../invitesSetup.js";
import { itipReply, mailReply, replySuite } from "../replyMail.js";

describe.each(WIRINGS)("answers to a recurring meeting by e-mail (%s)", async (wiring) => {
  const { suite, world: worldOf, port } = await replySuite(wiring);

  const responseOf = async (key: string, id: string, email: string) => {
    const res = await call(suite.url, "GET", `/v1/meetings/${id}`, { key });
    expect(res.status).toBe(200);
    return (res.body.attendees as { email: string; response: string }[]).find((a) => a.email === email)?.response;
  };
  const busyOn = async (key: string, day: string) => (await call(suite.url, "GET", `/v1/availability?date=${day}`, { key })).body.slots as { start: string; end: string; status: string }[];

  it.runIf(suite.available)("a REPLY without RECURRENCE-ID answers the series, one with it that occurrence: GET, busy time and events follow", async () => {
    const org = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    const bob = await createUserWithKey(suite.url, { mode: "live", timezone: "UTC" });
    const ann = `ann-${randomBytes(4).toString("hex")}@example.com`;
    const created = await call(suite.url, "POST", "/v1/meetings", {
      key: org.key,
      body: { title: "Weekly", duration: "1 hour", startTime: "2031-05-05T10:00:00Z", recurrence: "FREQ=WEEKLY;COUNT=3", participants: [bob.email, ann] },
    });
    expect(created.body).toMatchObject({ recurrence: "FREQ=WEEKLY;COUNT=3" });
    const seriesId = created.body.id as string;
    const second = `${seriesId}_20310512T100000Z`;

    const mail = await eventually(() => worldOf().smtp.to(bob.email)[0], 10_000);
    const replyTo = mail.mail.replyTo!.value[0]!.address!;
    const invite = parseInvite(mail.ics!);
    expect(invite.uid.startsWith(`${seriesId}@`)).toBe(true);
    const reply = (partstat: string, recurrenceId?: string) =>
      itipReply({ uid: invite.uid, sequence: invite.sequence, organizer: invite.organizer, attendee: bob.email, partstat, start: invite.start, end: invite.end, ...(recurrenceId ? { recurrenceId } : {}) });

    await mailReply(port(), replyTo, bob.email, reply("ACCEPTED"));
    await eventually(async () => ((await responseOf(org.key, seriesId, bob.email)) === "accepted" ? true : undefined), 5_000, 50);
    expect(await responseOf(bob.key, second, bob.email)).toBe("accepted");

    // The client declines the second occurrence only (a local time in a named zone: 12:00 Berlin is 10:00 UTC in May).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await mailReply(port(), replyTo, bob.email, reply("DECLINED", ";TZID=Europe/Berlin:20310512T120000"));
    await eventually(async () => ((await responseOf(org.key, second, bob.email)) === "declined" ? true : undefined), 5_000, 50);
    expect(await responseOf(org.key, seriesId, bob.email)).toBe("accepted");
    expect(await responseOf(org.key, `${seriesId}_20310519T100000Z`, bob.email)).toBe("accepted");
    expect(await responseOf(org.key, second, ann)).toBe("needsAction");

    expect(await busyOn(bob.key, "2031-05-05")).toContainEqual({ start: "10:00", end: "11:00", status: "busy" });
    expect(await busyOn(bob.key, "2031-05-12")).toEqual([{ start: "09:00", end: "17:00", status: "free" }]);
    expect(await busyOn(org.key, "2031-05-12")).toContainEqual({ start: "10:00", end: "11:00", status: "busy" });

    // An occurrence the series does not have answers nothing.
    await mailReply(port(), replyTo, bob.email, reply("TENTATIVE", ":20310513T100000Z"));
    expect(await responseOf(org.key, seriesId, bob.email)).toBe("accepted");

    // The public events: one answer about the series, one about the occurrence, each as GET shows it.
    type Listed = { type: string; data: { object: { id: string; seriesId: string | null; attendees: { email: string; response: string }[] }; previous?: { attendees: { response: string }[] } } };
    const answers = await eventually(async () => {
      const res = await call(suite.url, "GET", "/v1/events?limit=100&type=meeting.response_updated", { key: org.key });
      const mine = (res.body.data as Listed[]).filter((e) => e.data.object.id === seriesId || e.data.object.seriesId === seriesId).reverse();
      return mine.length === 2 ? mine : undefined;
    }, 30_000, 250);
    expect(answers.map((e) => [e.data.object.id, e.data.object.attendees.find((a) => a.email === bob.email)!.response, e.data.previous!.attendees[0]!.response])).toEqual([
      [seriesId, "accepted", "needsAction"],
      [second, "declined", "accepted"],
    ]);
    expect(answers[1]!.data.object).toEqual((await call(suite.url, "GET", `/v1/meetings/${second}`, { key: org.key })).body);
    // Two e-mails through SMTP and the relays of two streams: longer than one request on a loaded machine.
  }, 120_000);
});
