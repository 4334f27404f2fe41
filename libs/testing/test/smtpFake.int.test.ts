import { createConnection, type Socket } from "node:net";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../src/index.js";
import { SmtpFake } from "../src/smtpFake.js";

/** Sends `lines` one at a time, each after the server's answer to the one before (the greeting first). */
async function converse(socket: Socket, lines: readonly string[]): Promise<void> {
  let answers = "";
  socket.on("data", (chunk: Buffer) => (answers += chunk.toString("latin1")));
  for (let i = 0; i <= lines.length; i++) {
    await eventually(() => answers.split("\r\n").filter((l) => /^\d{3} /.test(l)).length > i, 10_000);
    if (i < lines.length) socket.write(`${lines[i]}\r\n`);
  }
}

describe("SmtpFake", () => {
  const smtp = new SmtpFake();
  let url: string;
  beforeAll(async () => {
    url = await smtp.start();
  });
  afterAll(() => smtp.stop());

  it("outlives a sender that dies mid-message, and takes the next sender's mail", async () => {
    const { port } = new URL(url);
    const socket = createConnection({ host: "127.0.0.1", port: Number(port) });
    // Reset once the envelope is open: a reset outside a message is ignored by the server anyway.
    await converse(socket, ["EHLO dying.test", "MAIL FROM:<a@example.com>", "RCPT TO:<b@example.com>"]);
    socket.resetAndDestroy();
    await eventually(() => smtp.brokenConnections === 1, 10_000);

    await nodemailer.createTransport(url).sendMail({ from: "a@example.com", to: "c@example.com", subject: "whole", text: "hello" });
    expect(smtp.to("c@example.com")).toHaveLength(1);
    expect(smtp.to("b@example.com")).toHaveLength(0);
  });
});
