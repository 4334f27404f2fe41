import { thrown } from "@sched/testing";
import { ContactCreateBody, ContactListQuery, ContactUpdateBody, contactsRoutes } from "@sched/proto";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RELATIONSHIP,
  MAX_CONTACTS,
  accountNameFor,
  contactView,
  formatTimestamp,
  includeBlocked,
  normalizeEmail,
  refuseIfNoRoom,
  refuseOwnEmail,
  requireContactId,
} from "../src/domain/contacts.js";


describe("e-mail normal form", () => {
  it("trims and lower-cases", () => {
    expect(normalizeEmail("  Carl@Example.COM ")).toBe("carl@example.com");
  });

  it("is what the create body stores", () => {
    expect(ContactCreateBody.parse({ email: " Carl@Example.COM " }).email).toBe("carl@example.com");
  });
});

describe("adding one's own e-mail", () => {
  it("when the e-mail is the owner's, whatever its case and spacing, then 400 naming email", () => {
    const err = thrown(() => refuseOwnEmail(" ANN@example.com", "ann@Example.com"));
    expect(err.code).toBe("invalid_request");
    expect(err.status).toBe(400);
    expect(err.details.param).toBe("email");
  });

  it("when the e-mail is someone else's, then nothing is refused", () => {
    expect(() => refuseOwnEmail("carl@example.com", "ann@example.com")).not.toThrow();
  });
});

describe("room in the list", () => {
  it("when the e-mail is already listed, then 409 contact_exists", () => {
    const err = thrown(() => refuseIfNoRoom({ total: 3, alreadyListed: true }));
    expect(err.code).toBe("contact_exists");
    expect(err.status).toBe(409);
  });

  it("when the list is full and the e-mail already in it, then the duplicate is what is reported", () => {
    expect(thrown(() => refuseIfNoRoom({ total: MAX_CONTACTS, alreadyListed: true })).code).toBe("contact_exists");
  });

  it("when the list holds 999, then one more fits", () => {
    expect(MAX_CONTACTS).toBe(1_000);
    expect(() => refuseIfNoRoom({ total: MAX_CONTACTS - 1, alreadyListed: false })).not.toThrow();
  });

  it("when the list holds 1,000, then 400 invalid_request", () => {
    const err = thrown(() => refuseIfNoRoom({ total: MAX_CONTACTS, alreadyListed: false }));
    expect(err.code).toBe("invalid_request");
    expect(err.message).toContain("1,000");
  });
});

describe("list filter", () => {
  it("leaves blocked contacts out unless includeBlocked is the string true", () => {
    expect(includeBlocked({})).toBe(false);
    expect(includeBlocked({ includeBlocked: "false" })).toBe(false);
    expect(includeBlocked({ includeBlocked: "true" })).toBe(true);
  });

  it("accepts only true or false, once, and no other parameter", () => {
    expect(ContactListQuery.safeParse({ includeBlocked: "true" }).success).toBe(true);
    expect(ContactListQuery.safeParse({}).success).toBe(true);
    for (const bad of [{ includeBlocked: "yes" }, { includeBlocked: "1" }, { includeBlocked: "TRUE" }, { includeBlocked: ["true", "false"] }, { limit: "5" }]) {
      expect(ContactListQuery.safeParse(bad).success).toBe(false);
    }
  });
});

describe("update body", () => {
  it("needs at least one of relationship and blocked", () => {
    expect(ContactUpdateBody.safeParse({}).success).toBe(false);
    expect(ContactUpdateBody.safeParse({ blocked: true }).success).toBe(true);
    expect(ContactUpdateBody.safeParse({ relationship: "friend" }).success).toBe(true);
  });

  it("refuses unknown fields and other relationships", () => {
    expect(ContactUpdateBody.safeParse({ blocked: true, name: "X" }).success).toBe(false);
    expect(ContactUpdateBody.safeParse({ relationship: "boss" }).success).toBe(false);
    expect(ContactUpdateBody.safeParse({ blocked: "true" }).success).toBe(false);
  });
});

describe("contact ids", () => {
  it("when the id has the ctc_ shape, then it is used", () => {
    expect(requireContactId("ctc_0123456789ABCDEFGHIJabcd")).toBe("ctc_0123456789ABCDEFGHIJabcd");
  });

  it.each(["not-an-id", "mtg_0123456789ABCDEFGHIJabcd", "ctc_0123456789ABCDEFGHIJabc", "ctc_0123456789ABCDEFGHIJabc!", "ctc_0123456789ABCDEFGHIJabcde"])(
    "when the id is %s, then 404 not_found",
    (id) => {
      const err = thrown(() => requireContactId(id));
      expect(err.code).toBe("not_found");
      expect(err.status).toBe(404);
    },
  );
});

describe("contact view", () => {
  it("formats addedAt in UTC to the second", () => {
    expect(formatTimestamp(new Date("2026-03-04T05:06:07.891Z"))).toBe("2026-03-04T05:06:07Z");
  });

  it("shows exactly the fields of the spec", () => {
    const view = contactView({
      id: "ctc_0123456789ABCDEFGHIJabcd",
      email: "carl@example.com",
      name: null,
      relationship: DEFAULT_RELATIONSHIP,
      blocked: false,
      addedAt: new Date("2026-01-02T03:04:05.678+02:00"),
    });
    expect(view).toEqual({
      id: "ctc_0123456789ABCDEFGHIJabcd",
      email: "carl@example.com",
      name: null,
      relationship: "other",
      blocked: false,
      addedAt: "2026-01-02T01:04:05Z",
    });
  });
});

describe("account name", () => {
  it("is the name of the looked-up user with that e-mail, or null", () => {
    const users = [
      { email: "dora@example.com", name: "Dora" },
      { email: "Carl@Example.com", name: "Carl" },
    ];
    expect(accountNameFor(users, "carl@example.com")).toBe("Carl");
    expect(accountNameFor(users, "eve@example.com")).toBeNull();
    expect(accountNameFor([], "carl@example.com")).toBeNull();
  });
});

describe("routes", () => {
  it("declares the five contact routes with their scopes, in the standard bucket", () => {
    const table = contactsRoutes.map((r) => `${r.method} ${r.path} ${r.scope} ${r.bucket} ${r.hasBody} ${r.idempotent === true}`);
    expect(table).toEqual([
      "GET /v1/contacts contacts:read standard false false",
      "POST /v1/contacts contacts:write standard true true",
      "GET /v1/contacts/:id contacts:read standard false false",
      "PATCH /v1/contacts/:id contacts:write standard true false",
      "DELETE /v1/contacts/:id contacts:write standard false false",
    ]);
    expect(new Set(contactsRoutes.map((r) => r.endpoint.subject)).size).toBe(5);
    for (const r of contactsRoutes) expect(r.endpoint.subject).toMatch(/^contacts\.v1\.http\./);
  });
});
