import { createLogger } from "@sched/logging";
import { accountsLookupUsers, connectionsGoogleCallback, contactsDelete, contactsGet, JsonText, meetingsList, type AnswerOf, type Caller, type ReplyOf } from "@sched/proto";
import { describe, expect, it } from "vitest";
import { bind, MemoryBus } from "../src/index.js";

// What a route's handler may return is checked when it is compiled (tsc -p
// tsconfig.test.json): each `@ts-expect-error` below fails the type check
// the day the contract stops refusing what follows it.

const caller: Caller = { userId: "usr_1", email: "a@example.com", timezone: "UTC", mode: "test", scopes: ["contacts:read"], apiKeyId: "key_1" };
const contact = (id: string) => ({ id, email: "bo@example.com", name: null, relationship: "other", blocked: false, addedAt: "2026-05-04T09:30:00Z" }) as const;

describe("a route's handler returns only what its contract declares", () => {
  it("takes a declared status with its declared body, and the requester gets that answer typed", async () => {
    const bus = new MemoryBus(createLogger({ name: "route-answers", level: "silent" }));
    await bus.serve({ name: "contacts", version: "1.0.0" }, [
      bind(contactsGet, async ({ params }) => ({ status: 200, body: { id: params.id, email: "bo@example.com", name: null, relationship: "friend", blocked: false, addedAt: "2026-05-04T09:30:00Z" } })),
      bind(contactsDelete, async () => ({ status: 204 })),
    ]);
    const got: ReplyOf<typeof contactsGet> = await bus.request(contactsGet, { params: { id: "ctc_1" }, query: {}, body: undefined }, { caller });
    // The reply's type is the declared one: status 200, a Contact's fields.
    const relationship: "colleague" | "client" | "friend" | "other" = got.body.relationship;
    expect([got.status, relationship]).toEqual([200, "friend"]);
    const removed = await bus.request(contactsDelete, { params: { id: "ctc_1" }, query: {}, body: undefined }, { caller });
    expect(removed).toEqual({ status: 204 });
    await bus.close();
  });

  it("refuses an undeclared status, a body where the contract has none, and a body of another shape", () => {
    const bindings = [
      // @ts-expect-error 200 is not a status DELETE /v1/contacts/:id declares (it answers 204)
      bind(contactsDelete, async () => ({ status: 200 })),
      // @ts-expect-error a 204 carries no body
      bind(contactsDelete, async () => ({ status: 204, body: { deleted: true } })),
      // @ts-expect-error 201 is not what GET /v1/contacts/:id answers
      bind(contactsGet, async ({ params }) => ({ status: 201, body: contact(params.id) })),
      // @ts-expect-error the body lacks the Contact's other fields
      bind(contactsGet, async ({ params }) => ({ status: 200, body: { id: params.id } })),
      // @ts-expect-error "stranger" is not a Relationship
      bind(contactsGet, async ({ params }) => ({ status: 200, body: { ...contact(params.id), relationship: "stranger" } })),
      // @ts-expect-error a 200 must carry its body
      bind(contactsGet, async () => ({ status: 200 })),
    ];
    expect(bindings).toHaveLength(6);
  });

  it("takes a body already encoded as JSON text as the declared body, and no JsonText vouching for another shape", () => {
    const page = new JsonText<{ data: never[]; hasMore: boolean }>(`{"data":[],"hasMore":false}`);
    const other = new JsonText<{ items: string[] }>(`{"items":[]}`);
    const bindings = [
      bind(meetingsList, async () => ({ status: 200, body: new JsonText(`{"data":[],"hasMore":false}`) })),
      bind(meetingsList, async () => ({ status: 200, body: page })),
      // @ts-expect-error the text vouches for a shape that is not a MeetingList
      bind(meetingsList, async () => ({ status: 200, body: other })),
    ];
    expect(bindings).toHaveLength(3);
  });

  it("takes a declared redirect with its Location and no body, and carries status and header across the bus", async () => {
    const bus = new MemoryBus(createLogger({ name: "route-answers", level: "silent" }));
    const location = "https://sched.example.com/dashboard/calendars?consent=connected&provider=google";
    await bus.serve({ name: "invites", version: "1.0.0" }, [bind(connectionsGoogleCallback, async () => ({ status: 303, headers: { Location: location } }))]);
    const got = await bus.forward(connectionsGoogleCallback, { params: {}, query: { state: "s" }, body: undefined });
    expect(got).toEqual({ status: 303, headers: { Location: location } });
    const bindings = [
      // @ts-expect-error a redirect must say where to
      bind(connectionsGoogleCallback, async () => ({ status: 303 })),
      // @ts-expect-error a redirect carries no body
      bind(connectionsGoogleCallback, async () => ({ status: 303, headers: { Location: location }, body: {} })),
      // @ts-expect-error 302 is not what the callback declares
      bind(connectionsGoogleCallback, async () => ({ status: 302, headers: { Location: location } })),
    ];
    expect(bindings).toHaveLength(3);
    await bus.close();
  });

  it("leaves an internal endpoint's handler to its reply schema, with no status", () => {
    const answer: AnswerOf<typeof accountsLookupUsers> = { users: [] };
    const bindings = [
      bind(accountsLookupUsers, async () => answer),
      // @ts-expect-error an internal reply is not an HTTP answer
      bind(accountsLookupUsers, async () => ({ status: 200, body: { users: [] } })),
    ];
    expect(bindings).toHaveLength(2);
  });
});
