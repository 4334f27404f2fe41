import { type Handler, replyBodyBudget, requireCaller } from "@sched/bus";
import { AppError } from "@sched/errors";
import { JsonText, type availabilityFreeBusy, type FreeBusyAnswer, type UserProfile } from "@sched/proto";
import { freeBusy } from "../domain/freeBusy.js";
import type { Interval } from "../domain/intervals.js";
import { busyWithCalendars, type BusyAnswer } from "../outbound/busy.js";
import { formatTimestamp, type AvailabilityDeps } from "./deps.js";
import { readHorizon } from "./horizon.js";
import { callerProfile, lookupUsers, visibleParticipants } from "../outbound/people.js";

const utf8 = new TextEncoder();

/**
 * POST /v1/availability/free-busy (api-decisions 14): the busy time of up
 * to 50 people over up to 31 days, like Google's freeBusy. Visible are the
 * caller (when listed) and the participants the recommendations would
 * count; the others are listed as not visible. Busy time of everyone
 * visible comes from meetings in one request (time off included) and from
 * their connected calendars, under the calendars' deadline; a calendar that
 * did not answer makes that person's `busyComplete` false.
 */
export function freeBusyHandler(deps: AvailabilityDeps): Handler<typeof availabilityFreeBusy> {
  return async ({ body }, ctx) => {
    const caller = requireCaller(ctx);
    const now = deps.now();
    // Refuse a bad range before asking anyone; it is read again on the account's own zone.
    readHorizon(body, caller.timezone, now);

    const others = body.participants.filter((e) => e !== caller.email);
    const users = await lookupUsers(deps.bus, { ids: [caller.userId], emails: others });
    const me = callerProfile(users, caller);
    const window = readHorizon(body, me.timezone, now);
    const people: UserProfile[] = [...(others.length < body.participants.length ? [me] : []), ...(await visibleParticipants(deps, caller, me, others, users))];
    const visible = new Map(people.map((p) => [p.id === me.id ? caller.email : p.email.toLowerCase(), p.id]));

    const { busy, incomplete, missing }: BusyAnswer =
      people.length > 0 ? await busyWithCalendars(deps.bus, deps.logger, caller.mode, people, window, deps.calendarBusyTimeoutMs) : { busy: new Map(), incomplete: new Set() };
    const answer = freeBusy({ window, listed: body.participants, visible, busy, incomplete, ...(missing ? { missing } : {}) });

    const reply: FreeBusyAnswer = {
      from: formatTimestamp(answer.window.start),
      to: formatTimestamp(answer.window.end),
      people: answer.people.map((p) => ({ email: p.email, busy: p.busy.map(period), busyComplete: p.busyComplete, ...(p.missingCalendars ? { missingCalendars: p.missingCalendars } : {}) })),
      notVisible: answer.notVisible,
    };
    const encoded = utf8.encode(JSON.stringify(reply));
    const budget = replyBodyBudget(deps.bus.maxMessageBytes());
    if (budget !== undefined && encoded.byteLength > budget) {
      throw new AppError("invalid_request", "Invalid to: these people have too much busy time in this range for one answer; ask for a shorter range or fewer participants.", { param: "to" });
    }
    return { status: 200, body: new JsonText(encoded) };
  };
}

function period(i: Interval): { start: string; end: string } {
  return { start: formatTimestamp(i.start), end: formatTimestamp(i.end) };
}
