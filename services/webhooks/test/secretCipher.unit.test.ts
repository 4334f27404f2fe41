import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SecretCipher } from "../src/domain/secretCipher.js";
import { newSigningSecret } from "../src/domain/secrets.js";

describe("sealed signing secrets", () => {
  const cipher = new SecretCipher(randomBytes(32));

  it("opens what it sealed, for the same endpoint only, and never shows the secret", () => {
    const secret = newSigningSecret();
    const sealed = cipher.seal(secret, "whe_a");
    expect(sealed).not.toContain(secret.slice(6));
    expect(cipher.open(sealed, "whe_a")).toBe(secret);
    expect(() => cipher.open(sealed, "whe_b")).toThrow();
    expect(() => new SecretCipher(randomBytes(32)).open(sealed, "whe_a")).toThrow();
  });

  it("seals the same secret differently each time", () => {
    expect(cipher.seal("whsec_x", "whe_a")).not.toBe(cipher.seal("whsec_x", "whe_a"));
  });

  it("makes Standard Webhooks secrets of 32 random bytes", () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
  });
});
