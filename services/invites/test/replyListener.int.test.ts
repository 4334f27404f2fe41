import { MemoryBus } from "@sched/bus";
import nodemailer from "nodemailer";
import { pino } from "pino";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplyAddresses } from "../src/domain/replyAddress.js";
import { startReplyListener } from "../src/inbound/replyMail.js";

const MEETING_ID = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";
const addresses = new ReplyAddresses(Buffer.alloc(32, 7), "replies.example.com");

/** An iTIP REPLY of Ann's, as her calendar client writes it. */
const reply = (a: { uid: string; organizer: string; attendee?: string }) =>
  [
    ...["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "METHOD:REPLY", "BEGIN:VEVENT", `UID:${a.uid}`, "DTSTAMP:20310502T100000Z", "SEQUENCE:1"],
    ...["DTSTART:20310505T090000Z", "DTEND:20310505T093000Z", `ORGANIZER:mailto:${a.organizer}`, `ATTENDEE;PARTSTAT=ACCEPTED:mailto:${a.attendee ?? "ann@example.com"}`],
    ...["END:VEVENT", "END:VCALENDAR", ""],
  ].join("\r\n");

/**
 * The reply listener on its own: what one peer may cost it, and what it
 * drops before asking meetings. None of these messages proves an answer,
 * so the meetings service is never asked: the bus serves nothing.
 */
describe("the reply listener", () => {
  const lines: Array<{ msg: string; problem?: string }> = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString("utf8")) as { msg: string; problem?: string });
        done();
      },
    }),
  );
  const bus = new MemoryBus(logger);
  let listener: Awaited<ReturnType<typeof startReplyListener>>;

  beforeAll(async () => {
    listener = await startReplyListener(bus, logger, addresses, {
      ...{ host: "127.0.0.1", port: 0, uidDomain: "sched.invalid", messagesPerMinute: 6 },
      answersResetAt: () => Promise.resolve(undefined),
      organizerOf: () => Promise.resolve(undefined),
    });
  });
  afterAll(async () => {
    await listener.stop();
    await bus.close();
  });

  const send = async (to: string[], text: string, ics?: string) => {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: listener.port, secure: false, ignoreTLS: true });
    try {
      return await transport.sendMail({ from: "ann@example.com", to, subject: "Re: invitation", text, ...(ics ? { icalEvent: { method: "REPLY", content: ics } } : {}) });
    } finally {
      transport.close();
    }
  };
  const replyAddress = addresses.addressFor(MEETING_ID, "ann@example.com");

  it("accepts and drops, with a log line naming why, a reply of no meeting of ours, for another attendee, or naming as organizer the reply address of a meeting it never sent", async () => {
    const uid = `${MEETING_ID}@sched.invalid`;
    await send([replyAddress], "Accepted", reply({ uid: "someone-else@example.com", organizer: "org@example.com" }));
    await send([replyAddress], "Accepted", reply({ uid, organizer: "org@example.com", attendee: "bob@example.com" }));
    await send([replyAddress], "Accepted", reply({ uid, organizer: replyAddress }));
    expect(lines.filter((l) => l.msg === "reply dropped").map((l) => l.problem)).toEqual([
      "UID of no meeting of ours",
      "no ATTENDEE is the one this reply address was made for",
      "a meeting the invites service never sent",
    ]);
    // The log never carries the reply address, which is what proves a reply.
    expect(JSON.stringify(lines)).not.toContain(replyAddress.split("@")[0]);
  });

  it("refuses a message over 1 MB, a message for more than ten reply addresses, a message that is no calendar reply, and a sender's messages past its share of a minute", async () => {
    // A sender that does not say its size up front is read to the end and refused, not kept whole.
    await expect(send([replyAddress], "x".repeat(1_100_000))).rejects.toThrow(/552/);
    const many = Array.from({ length: 11 }, (_, i) => addresses.addressFor(MEETING_ID, `p${i}@example.com`));
    const partly = await send(many, "Accepted", reply({ uid: "someone-else@example.com", organizer: "org@example.com" }));
    expect(partly.rejected).toEqual([many[10]]);
    expect(String(partly.rejectedErrors?.[0])).toMatch(/452/);
    // A person writing to the organizer the invite names gets it back rather than lost: the address takes calendar replies only.
    await expect(send([replyAddress], "Can we make it ten instead?")).rejects.toThrow(/550.*calendar replies only/);
    // Six messages a minute here, the three of the test before and the three above counted: the next is told to try again later.
    await expect(send([replyAddress], "Can we make it ten instead?")).rejects.toThrow(/450/);
  });
});
