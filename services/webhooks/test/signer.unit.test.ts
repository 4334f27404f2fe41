import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { SecretCipher } from "../src/domain/secretCipher.js";
import { DeliverySigner } from "../src/outbound/signer.js";

const cipher = new SecretCipher(Buffer.alloc(32, 3));
const secret = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
const rolled = `whsec_${Buffer.alloc(24, 5).toString("base64")}`;
const body = Buffer.from(JSON.stringify({ id: "evt_1", type: "meeting.created", data: { object: { title: "Ünïcode ✓" } } }));

describe("DeliverySigner", () => {
  it("signs as the Standard Webhooks library does and verifies with it", () => {
    const now = new Date("2031-01-01T09:00:00.750Z");
    const headers = new DeliverySigner(cipher).sign({ id: "whe_1", sealedSecret: cipher.seal(secret, "whe_1"), sealedPreviousSecret: null, previousSecretExpiresAt: null }, "evt_1", body, now);
    expect(headers["webhook-timestamp"]).toBe("1925024400");
    expect(headers["webhook-signature"]).toBe(new Webhook(secret).sign("evt_1", new Date("2031-01-01T09:00:00Z"), body.toString()));
  });

  it("adds the rolled secret's signature while it is valid, and only then", () => {
    const signer = new DeliverySigner(cipher);
    const keys = { id: "whe_2", sealedSecret: cipher.seal(secret, "whe_2"), sealedPreviousSecret: cipher.seal(rolled, "whe_2"), previousSecretExpiresAt: new Date("2031-01-02T00:00:00Z") };
    const at = new Date("2031-01-01T09:00:00Z");
    const both = signer.sign(keys, "evt_2", body, at)["webhook-signature"].split(" ");
    expect(both).toEqual([new Webhook(secret).sign("evt_2", at, body.toString()), new Webhook(rolled).sign("evt_2", at, body.toString())]);
    expect(signer.sign(keys, "evt_2", body, new Date("2031-01-02T00:00:01Z"))["webhook-signature"].split(" ")).toHaveLength(1);
  });
});
