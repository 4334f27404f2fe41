import { accountsAdminCreateUser, accountsUpdateMe, userCreated, userUpdated } from "@sched/proto";
import { isEvent } from "@sched/bus";
import { eventually } from "@sched/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAccounts, uniqueEmail, type AccountsHarness } from "./harness.js";

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe("user events, against Postgres", () => {
  let h: AccountsHarness;
  beforeAll(async () => {
    h = await startAccounts();
  });
  afterAll(async () => h?.stop());

  const eventsOf = (userId: string) => h.events.filter((m) => m.payload.userId === userId);

  it("when a user is created, then user.created carries the user", async () => {
    const email = uniqueEmail();
    const reply = await h.call(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Eva", timezone: "Europe/Rome" } });
    const { id, createdAt } = reply.body as { id: string; createdAt: string };
    const [event] = await eventually(() => (eventsOf(id).length > 0 ? eventsOf(id) : undefined));
    expect(isEvent(event!, userCreated)).toBe(true);
    const payload = event!.payload;
    expect(payload).toMatchObject({ userId: id, email, name: "Eva", timezone: "Europe/Rome" });
    expect(payload.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.occurredAt).toMatch(TIMESTAMP);
    expect(payload.occurredAt).toBe(createdAt);
  });

  it("when a user is refused as a duplicate, then no event is published", async () => {
    const email = uniqueEmail();
    await h.call(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Once" } });
    await h.failure(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name: "Twice" } });
    await eventually(() => h.events.some((m) => m.payload.email === email));
    await new Promise((r) => setTimeout(r, 50));
    expect(h.events.filter((m) => m.payload.email === email)).toHaveLength(1);
  });

  it("when a user changes his account, then user.updated carries the new values, once per change that changes something", async () => {
    const { userId, caller } = await h.userWithKey();
    const patch = (body: { name?: string; timezone?: string; workingHours?: [] }) => h.call(accountsUpdateMe, { params: {}, query: {}, body }, caller);
    await patch({ name: "Renamed" });
    await patch({ name: "Renamed" });
    await patch({ timezone: "Asia/Kolkata" });
    await patch({ workingHours: [] });
    await patch({});

    const updated = await eventually(() => {
      const found = eventsOf(userId).filter((m) => isEvent(m, userUpdated));
      return found.length >= 3 ? found : undefined;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(eventsOf(userId).map((m) => m.subject)).toEqual([userCreated.subject, userUpdated.subject, userUpdated.subject, userUpdated.subject]);
    expect(updated.map((m) => m.payload)).toMatchObject([
      { userId, name: "Renamed", timezone: "UTC" },
      { userId, name: "Renamed", timezone: "Asia/Kolkata" },
      { userId, name: "Renamed", timezone: "Asia/Kolkata" },
    ]);
    const ids = eventsOf(userId).map((m) => m.payload.eventId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("when the bus refuses the event, then the committed change still answers, and the event follows once the bus is back", async () => {
    const { userId, caller } = await h.userWithKey();
    const publish = h.bus.publish.bind(h.bus);
    h.bus.publish = async () => {
      throw new Error("bus down");
    };
    try {
      const reply = await h.call(accountsUpdateMe, { params: {}, query: {}, body: { name: "Unannounced" } }, caller);
      expect(reply.status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      expect(eventsOf(userId).filter((m) => isEvent(m, userUpdated))).toHaveLength(0);
    } finally {
      h.bus.publish = publish;
    }
    expect((await h.db("users").where({ id: userId }).first()).name).toBe("Unannounced");
    // The outbox row was written with the change; the relay publishes it when the bus answers again.
    const [updated] = await eventually(() => {
      const found = eventsOf(userId).filter((m) => isEvent(m, userUpdated));
      return found.length > 0 ? found : undefined;
    }, 10_000);
    expect(updated!.payload).toMatchObject({ userId, name: "Unannounced" });
  });
});
