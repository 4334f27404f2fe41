import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ReplyCipher } from "../src/outbound/idempotency/replyCipher.js";

const reply = { status: 201, body: { id: "whe_1", secret: "whsec_shown_once" }, headers: { Location: "/v1/webhook-endpoints/whe_1" } };

describe("sealing the replies kept under Idempotency-Key", () => {
  it("opens what it sealed, and the sealed text shows nothing of the reply", () => {
    const cipher = new ReplyCipher(randomBytes(32));
    const sealed = cipher.seal(reply, "key_1:abc");
    expect(sealed).not.toContain("whsec_shown_once");
    expect(sealed).not.toContain("whe_1");
    expect(cipher.open(sealed, "key_1:abc")).toEqual(reply);
  });

  it("uses a fresh nonce each time", () => {
    const cipher = new ReplyCipher(randomBytes(32));
    expect(cipher.seal(reply, "k")).not.toBe(cipher.seal(reply, "k"));
  });

  it("refuses another key, another binding, a changed text and an unknown format", () => {
    const cipher = new ReplyCipher(randomBytes(32));
    const sealed = cipher.seal(reply, "k");
    expect(() => new ReplyCipher(randomBytes(32)).open(sealed, "k")).toThrow();
    expect(() => cipher.open(sealed, "other")).toThrow();
    const [format, nonce, data] = sealed.split(".");
    const bytes = Buffer.from(data!, "base64");
    bytes[0]! ^= 1;
    expect(() => cipher.open([format, nonce, bytes.toString("base64")].join("."), "k")).toThrow();
    expect(() => cipher.open(`v0.${nonce}.${data}`, "k")).toThrow(/unknown format/);
  });

  it("takes only a 32-byte key", () => {
    expect(() => new ReplyCipher(randomBytes(16))).toThrow(/32 bytes/);
  });
});
