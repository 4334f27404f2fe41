import { invalidRequest, type AppError } from "@sched/errors";
import { MeetingCreateBody, MeetingListQuery, MeetingUpdateBody, meetingsCreate, meetingsRoutes } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { canonicalJson, requestFingerprint } from "@sched/ids";
import { readIdempotencyKey } from "../src/domain/idempotency.js";

const valid = { title: "Sync", duration: "30 mins", startTime: "2026-05-04T09:30:00Z", participants: ["a@example.com"] };

/** The 400 the bus would answer for this create body, or undefined when it passes. */
function createError(body: unknown): AppError | undefined {
  const parsed = meetingsCreate.request.safeParse({ params: {}, query: {}, body });
  return parsed.success ? undefined : invalidRequest(parsed.error, { httpEnvelope: true });
}

describe("create body", () => {
  it("normalises participants: trimmed, lower-cased, duplicates dropped in first-seen order", () => {
    const body = MeetingCreateBody.parse({ ...valid, participants: [" B@Example.com", "a@example.com", "b@example.COM", "A@example.com"] });
    expect(body.participants).toEqual(["b@example.com", "a@example.com"]);
  });

  it("trims the title and keeps the description as given", () => {
    const body = MeetingCreateBody.parse({ ...valid, title: "  Sync  ", description: "  agenda " });
    expect(body.title).toBe("Sync");
    expect(body.description).toBe("  agenda ");
  });

  it.each([
    [{ ...valid, title: undefined }, "title"],
    [{ ...valid, title: "   " }, "title"],
    [{ ...valid, title: "x".repeat(201) }, "title"],
    [{ ...valid, title: "a\u0000b" }, "title"],
    [{ ...valid, description: "x".repeat(10_001) }, "description"],
    [{ ...valid, description: "lone \uD800 surrogate" }, "description"],
    [{ ...valid, duration: "20 mins" }, "duration"],
    [{ ...valid, duration: "1 Hour" }, "duration"],
    [{ ...valid, startTime: "next tuesday" }, "startTime"],
    [{ ...valid, startTime: 1_700_000_000 }, "startTime"],
    [{ ...valid, participants: [] }, "participants"],
    [{ ...valid, participants: "a@example.com" }, "participants"],
    [{ ...valid, participants: Array.from({ length: 101 }, (_, i) => `p${i}@example.com`) }, "participants"],
    [{ ...valid, participants: ["a@example.com", "b@example.com", "not-an-email"] }, "participants[2]"],
    [{ ...valid, sendInvites: "yes" }, "sendInvites"],
    [{ ...valid, status: "cancelled" }, "status"],
    [{ ...valid, colour: "blue" }, "colour"],
  ])("refuses %j naming %s", (body, param) => {
    const err = createError(body);
    expect(err).toMatchObject({ code: "invalid_request", details: { param } });
    expect(err!.message).toContain(param);
  });

  it("refuses a missing body", () => {
    expect(createError(undefined)?.code).toBe("invalid_request");
  });

  it("accepts 100 participants, a 200-character title and a 10,000-character description", () => {
    const body = { ...valid, title: "t".repeat(200), description: "d".repeat(10_000), participants: Array.from({ length: 100 }, (_, i) => `p${i}@example.com`) };
    expect(createError(body)).toBeUndefined();
  });
});

describe("update body", () => {
  it("every field is optional and unknown fields are refused", () => {
    expect(MeetingUpdateBody.safeParse({}).success).toBe(true);
    expect(MeetingUpdateBody.safeParse({ status: "cancelled" }).success).toBe(true);
    expect(MeetingUpdateBody.safeParse({ organizer: "x@example.com" }).success).toBe(false);
  });
});

describe("list query", () => {
  it.each(["1", "20", "100", "007"])("accepts limit=%s", (limit) => {
    expect(MeetingListQuery.safeParse({ limit }).success).toBe(true);
  });

  it.each(["abc", "0", "101", "-1", "1.5", "", " 5", "1e2", "+5"])("refuses limit=%j", (limit) => {
    expect(MeetingListQuery.safeParse({ limit }).success).toBe(false);
  });

  it("refuses a repeated parameter, an unknown filter and unknown parameters", () => {
    expect(MeetingListQuery.safeParse({ limit: ["5", "6"] }).success).toBe(false);
    expect(MeetingListQuery.safeParse({ filter: "soon" }).success).toBe(false);
    expect(MeetingListQuery.safeParse({ page: "2" }).success).toBe(false);
  });
});

describe("routes", () => {
  it("declares the five routes with their scopes; POST is idempotent", () => {
    expect(meetingsRoutes.map((r) => [r.method, r.path, r.scope, r.bucket, r.hasBody, r.idempotent === true])).toEqual([
      ["GET", "/v1/meetings", "meetings:read", "standard", false, false],
      ["POST", "/v1/meetings", "meetings:write", "standard", true, true],
      ["GET", "/v1/meetings/:id", "meetings:read", "standard", false, false],
      ["PATCH", "/v1/meetings/:id", "meetings:write", "standard", true, false],
      ["DELETE", "/v1/meetings/:id", "meetings:write", "standard", false, false],
    ]);
  });
});

describe("idempotency keys", () => {
  it("reads the header whatever its case", () => {
    expect(readIdempotencyKey({ "Idempotency-Key": "abc" })).toBe("abc");
    expect(readIdempotencyKey({ "idempotency-key": "abc" })).toBe("abc");
    expect(readIdempotencyKey({})).toBeUndefined();
  });

  it.each(["", "x".repeat(256), "tab\there", "ключ", "bell\u0007"])("refuses %j with 400 naming Idempotency-Key", (value) => {
    let error: unknown;
    try {
      readIdempotencyKey({ "Idempotency-Key": value });
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: "invalid_request", details: { param: "Idempotency-Key" } });
  });

  it("accepts 255 printable characters, spaces included", () => {
    expect(readIdempotencyKey({ "Idempotency-Key": "a b~".repeat(63) + "xyz" })).toHaveLength(255);
  });

  it("fingerprints ignore key order but not values, method or path", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    const a = requestFingerprint("POST", "/v1/meetings", { title: "x", duration: "30 mins" });
    expect(requestFingerprint("POST", "/v1/meetings", { duration: "30 mins", title: "x" })).toBe(a);
    expect(requestFingerprint("POST", "/v1/meetings", { duration: "30 mins", title: "y" })).not.toBe(a);
    expect(requestFingerprint("POST", "/v1/contacts", { title: "x", duration: "30 mins" })).not.toBe(a);
  });
});
