import { describe, expect, it } from "vitest";
import { redactedQuery } from "../src/instrumentations.js";
import { idAttributes } from "../src/spans.js";

describe("idAttributes", () => {
  it("keeps the ids among an object's top-level fields, named after the field", () => {
    expect(
      idAttributes({ id: "mtg_AbCdEfGhIjKlMnOpQrStUvWx", meetingId: "mtg_AbCdEfGhIjKlMnOpQrStUvWx", apiKeyId: "key_AbCdEfGhIjKlMnOpQrStUvWx", title: "Budget" }),
    ).toEqual({
      "sched.id": "mtg_AbCdEfGhIjKlMnOpQrStUvWx",
      "sched.meeting.id": "mtg_AbCdEfGhIjKlMnOpQrStUvWx",
      "sched.api_key.id": "key_AbCdEfGhIjKlMnOpQrStUvWx",
    });
  });

  it("never takes an e-mail address, an API key or a value not shaped like an id, even in an id field", () => {
    expect(
      idAttributes({
        userId: "alice@example.com",
        id: "sk_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        contactId: "42",
        organizerId: { id: "usr_AbCdEfGhIjKlMnOpQrStUvWx" },
        email: "usr_AbCdEfGhIjKlMnOpQrStUvWx",
      }),
    ).toEqual({});
  });

  it("gives nothing for what is not an object", () => {
    expect(idAttributes(undefined)).toEqual({});
    expect(idAttributes("mtg_AbCdEfGhIjKlMnOpQrStUvWx")).toEqual({});
    expect(idAttributes(["mtg_AbCdEfGhIjKlMnOpQrStUvWx"])).toEqual({});
  });
});

describe("redactedQuery", () => {
  it("keeps the parameter names and drops every value", () => {
    expect(redactedQuery("/v1/contacts?q=alice%40example.com&limit=5&q=bob")).toEqual({ "url.query": "q=REDACTED&limit=REDACTED" });
  });

  it("adds nothing when there is no query", () => {
    expect(redactedQuery("/v1/contacts")).toEqual({});
    expect(redactedQuery(undefined)).toEqual({});
  });
});
