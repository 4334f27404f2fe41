import { type Handler, requireCaller } from "@sched/bus";
import { notFound } from "@sched/errors";
import { contactsGrantsView, type availabilityDay, type Caller, type DayViewBody, type UserProfile } from "@sched/proto";
import { resolveDayQuery } from "../domain/dates.js";
import type { LocalDate } from "@sched/time";
import { dayView } from "../domain/dayView.js";
import { workingWindowsOn } from "../domain/workingWindows.js";
import { busyWithCalendars } from "../outbound/busy.js";
import { SIBLING_TIMEOUT_MS, invalidParam, type AvailabilityDeps } from "./deps.js";
import { callerProfile, lookupUsers } from "../outbound/people.js";

/**
 * GET /v1/availability (api-spec 4.5, api-decisions 6): one person's working
 * hours on one date, tiled into free and busy slots on that person's clock.
 *
 * With `email=` the person is the account with that e-mail, when they let the
 * caller see their day (contacts.v1.grants-view, a block by either side
 * refusing); the date is then read in THEIR zone, as the whole view is ("in
 * Bob's zone"): `today` is Bob's today. An unknown e-mail and a refused view
 * are the same 404, so the answer tells nothing about who has an account.
 */
export function dayViewHandler(deps: AvailabilityDeps): Handler<typeof availabilityDay> {
  return async ({ query }, ctx) => {
    const caller = requireCaller(ctx);
    const now = deps.now();
    // Whether a date is valid does not depend on the zone: refuse a bad one (400)
    // before any question to another service, and before any 404.
    readDate(query.date, caller.timezone, now);

    const person = query.email === undefined || query.email === caller.email ? await ownProfile(deps, caller) : await visibleProfile(deps, caller, query.email);
    const localDate = readDate(query.date, person.timezone, now);
    const windows = workingWindowsOn(localDate, person.timezone, person.workingHours);
    const span = windows.length === 0 ? undefined : { start: windows[0]!.start, end: windows[windows.length - 1]!.end };
    // The caller's own day asks invites only when their calendars may add busy time (the cached caller says so, docs/design.md "Identity").
    const calendars = !(person.id === caller.userId && caller.calendarConnected === false);
    const answer = span ? await busyWithCalendars(deps.bus, deps.logger, caller.mode, [person], span, deps.calendarBusyTimeoutMs, calendars) : undefined;
    const busy = answer?.busy.get(person.id) ?? [];
    const body: DayViewBody = dayView({ localDate, zone: person.timezone, workingHours: person.workingHours, busy });
    // A calendar that did not answer is said so: its free slots are unknown, not free.
    if (answer?.incomplete.has(person.id)) Object.assign(body, { busyComplete: false, missingCalendars: answer.missing?.get(person.id) ?? [] });
    return { status: 200, body };
  };
}

function readDate(text: string, zone: string, now: number): LocalDate {
  const parsed = resolveDayQuery(text, zone, now);
  if (!parsed.ok) throw invalidParam(parsed);
  return parsed.value;
}

/** Whose day a view shows: what of their profile it needs. */
type DayOwner = Pick<UserProfile, "id" | "email" | "timezone" | "workingHours">;

/**
 * The caller's own zone and working hours: those the caller carries (the
 * gateway's, dropped by every replica when either changes, docs/design.md
 * "Identity"), so that the day view asks accounts nothing; else accounts'.
 */
async function ownProfile(deps: AvailabilityDeps, caller: Caller): Promise<DayOwner> {
  if (caller.workingHours) return { id: caller.userId, email: caller.email, timezone: caller.timezone, workingHours: caller.workingHours };
  return callerProfile(await lookupUsers(deps.bus, { ids: [caller.userId] }), caller);
}

async function visibleProfile(deps: AvailabilityDeps, caller: Caller, email: string): Promise<UserProfile> {
  const owner = (await lookupUsers(deps.bus, { emails: [email] })).find((u) => u.email.toLowerCase() === email);
  if (!owner) throw notFound("user");
  if (owner.id === caller.userId) return owner;
  const { granted } = await deps.bus.request(
    contactsGrantsView,
    { mode: caller.mode, owner: { userId: owner.id, email: owner.email }, viewerEmail: caller.email, viewerUserId: caller.userId },
    { timeoutMs: SIBLING_TIMEOUT_MS },
  );
  if (!granted) throw notFound("user");
  return owner;
}
