import { MemoryBus } from "@sched/bus";
import { createLogger } from "@sched/logging";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplyAddresses } from "../src/domain/replyAddress.js";
import { startReplyListener } from "../src/inbound/replyMail.js";

const MEETING_ID = "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE";
const addresses = new ReplyAddresses(Buffer.alloc(32, 7), "replies.example.com");

/**
 * What one peer may cost the reply listener. None of these messages proves
 * an answer, so the meetings service is never asked: the bus serves nothing.
 */
describe("the reply listener's limits", () => {
  const logger = createLogger({ name: "reply-listener-limits-test", level: "silent" });
  const bus = new MemoryBus(logger);
  let listener: Awaited<ReturnType<typeof startReplyListener>>;

  beforeAll(async () => {
    listener = await startReplyListener(bus, logger, addresses, {
      ...{ host: "127.0.0.1", port: 0, uidDomain: "sched.invalid", messagesPerMinute: 3 },
      answersResetAt: () => Promise.resolve(undefined),
      organizerOf: () => Promise.resolve(undefined),
    });
  });
  afterAll(async () => {
    await listener.stop();
    await bus.close();
  });

  const send = async (to: string[], text: string) => {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: listener.port, secure: false, ignoreTLS: true });
    try {
      return await transport.sendMail({ from: "ann@example.com", to, subject: "Re: invitation", text });
    } finally {
      transport.close();
    }
  };
  const replyAddress = addresses.addressFor(MEETING_ID, "ann@example.com");

  it("refuses a message over 1 MB, a message for more than ten reply addresses, and a sender's messages past its share of a minute", async () => {
    // A sender that does not say its size up front is read to the end and refused, not kept whole.
    await expect(send([replyAddress], "x".repeat(1_100_000))).rejects.toThrow(/552/);
    const many = Array.from({ length: 11 }, (_, i) => addresses.addressFor(MEETING_ID, `p${i}@example.com`));
    const partly = await send(many, "not a reply");
    expect(partly.rejected).toEqual([many[10]]);
    expect(String(partly.rejectedErrors?.[0])).toMatch(/452/);
    // Three messages a minute here, and both above counted: the next is told to try again later.
    await send([replyAddress], "not a reply");
    await expect(send([replyAddress], "not a reply")).rejects.toThrow(/450/);
  });
});
