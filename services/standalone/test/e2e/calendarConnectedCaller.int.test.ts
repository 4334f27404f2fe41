import { describe, expect, it } from "vitest";
import { call, createUserWithKey, perSuite, WIRINGS } from "../harness.js";
import { attachGoogle, startInvitesWorld, type InvitesWorld } from "../invitesSetup.js";

/** Long enough that only a dropped entry, never an expired one, lets the gateway learn of a new connection. */
const AUTH_CACHE_TTL_MS = 600_000;

const DAY = "2031-04-07";
const FREE_DAY = [{ start: "09:00", end: "17:00", status: "free" }];
const BUSY_DAY = [
  { start: "09:00", end: "10:00", status: "free" },
  { start: "10:00", end: "11:30", status: "busy" },
  { start: "11:30", end: "17:00", status: "free" },
];

/**
 * The cached caller says whether the user has a calendar connection, so that
 * a day view of a user without one does not ask invites: connecting or
 * removing one must still show in the very next day view, whatever the cache's
 * lifetime (invites' caller-changed notice drops the cached callers first).
 */
describe.each(WIRINGS)("a day view through a cached caller as calendars are connected and removed (%s)", async (wiring) => {
  let world: InvitesWorld;
  const { available } = await perSuite(wiring, async () => (world = await startInvitesWorld(wiring, {}, {}, { authCacheTtlMs: AUTH_CACHE_TTL_MS })));

  it.runIf(available)("shows a connected calendar's busy time in the first day view after the connection is made, and none after it is removed", async () => {
    const user = await createUserWithKey(world.url, { mode: "live", timezone: "UTC" });
    world.google.busy = [{ start: `${DAY}T10:00:00Z`, end: `${DAY}T11:30:00Z` }];
    // The gateway caches the caller, without a connection: Google is not asked.
    const asked = world.google.calendarCalls().length;
    expect((await call(world.url, "GET", `/v1/availability?date=${DAY}`, { key: user.key })).body.slots).toEqual(FREE_DAY);
    expect(world.google.calendarCalls().length).toBe(asked);

    const connectionId = await attachGoogle(world, user.userId, world.google.grant());
    expect((await call(world.url, "GET", `/v1/availability?date=${DAY}`, { key: user.key })).body.slots).toEqual(BUSY_DAY);

    expect((await call(world.url, "DELETE", `/v1/calendar-connections/${connectionId}`, { key: user.key })).status).toBe(204);
    expect((await call(world.url, "GET", `/v1/availability?date=${DAY}`, { key: user.key })).body.slots).toEqual(FREE_DAY);
  });
});
