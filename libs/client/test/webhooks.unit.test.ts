import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../src/index.js";

const secret = `whsec_${Buffer.from("a signing secret of 32 bytes!!!!").toString("base64")}`;
const event = { id: "evt_3nR8sVbQ2xL7tKmP0aZcY9dF", type: "meeting.deleted", createdAt: "2030-02-21T09:00:00Z", mode: "test", data: { object: { id: "mtg_4kQ9sVnB2xR7tLmP0aZcY8dE" } } };

function delivery(signWith: string, at = new Date()) {
  const body = JSON.stringify(event);
  const seconds = Math.floor(at.getTime() / 1000);
  const signature = new Webhook(signWith).sign(event.id, new Date(seconds * 1000), body);
  return { body, headers: { "webhook-id": event.id, "webhook-timestamp": String(seconds), "webhook-signature": signature } };
}

describe("verifyWebhook", () => {
  it("returns the event of a delivery signed with the secret, from plain or Fetch headers", () => {
    const { body, headers } = delivery(secret);
    expect(verifyWebhook(body, headers, secret)).toEqual(event);
    expect(verifyWebhook(Buffer.from(body), new Headers(headers), secret)).toEqual(event);
  });

  it("accepts a delivery carrying the old and the new signature during a roll", () => {
    const other = `whsec_${Buffer.from("another secret of 32 bytes!!!!!!").toString("base64")}`;
    const { body, headers } = delivery(secret);
    const both = { ...headers, "webhook-signature": `${delivery(other).headers["webhook-signature"]} ${headers["webhook-signature"]}` };
    expect(verifyWebhook(body, both, secret)).toEqual(event);
  });

  it("refuses another secret, a changed body and an old timestamp", () => {
    const { body, headers } = delivery(secret);
    expect(() => verifyWebhook(body, headers, `whsec_${Buffer.from("the wrong secret of 32 bytes!!!!").toString("base64")}`)).toThrow();
    expect(() => verifyWebhook(body.replace("test", "live"), headers, secret)).toThrow();
    const old = delivery(secret, new Date(Date.now() - 10 * 60_000));
    expect(() => verifyWebhook(old.body, old.headers, secret)).toThrow();
  });
});
