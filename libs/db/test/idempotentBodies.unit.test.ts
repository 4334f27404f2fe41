import { Sealer } from "@sched/ids";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bodyAtRest, bodyFromRest } from "../src/idempotentWrites/storedBody.js";
import { readIdempotencyKey } from "../src/idempotentWrites/requestHeaders.js";

const sealer = new Sealer(randomBytes(32), "a test key");
const body = { id: "whe_1", secret: "whsec_shown-once" };
const record = JSON.stringify(["key_1", "order-1", "fingerprint"]);

describe("answers kept under an Idempotency-Key", () => {
  it("rest as they are without a sealer", () => {
    expect(bodyAtRest(body, undefined, record)).toBe(body);
    expect(bodyFromRest(body, undefined, record)).toEqual({ body });
  });

  it("rest sealed with one, never holding the secret in clear, and open again for their own record", () => {
    const atRest = bodyAtRest(body, sealer, record);
    expect(JSON.stringify(atRest)).not.toContain("whsec_shown-once");
    expect(bodyFromRest(JSON.parse(JSON.stringify(atRest)), sealer, record)).toEqual({ body });
  });

  it("do not open under another record, another key, or unsealed where they should be: such a record is as good as expired", () => {
    const atRest = bodyAtRest(body, sealer, record);
    expect(bodyFromRest(atRest, sealer, JSON.stringify(["key_1", "order-2", "fingerprint"]))).toBeUndefined();
    expect(bodyFromRest(atRest, new Sealer(randomBytes(32), "a rotated key"), record)).toBeUndefined();
    expect(bodyFromRest(body, sealer, record)).toBeUndefined();
    expect(bodyFromRest(null, sealer, record)).toBeUndefined();
  });
});

describe("the Idempotency-Key header on the bus", () => {
  it("is read whatever the case of its name, and a malformed one is a 400 naming it", () => {
    expect(readIdempotencyKey({ "idempotency-key": "k" })).toBe("k");
    expect(readIdempotencyKey({})).toBeUndefined();
    expect(() => readIdempotencyKey({ "Idempotency-Key": "" })).toThrow(expect.objectContaining({ code: "invalid_request", details: { param: "Idempotency-Key" } }));
  });
});
