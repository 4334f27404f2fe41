import { type Handler, replyBodyBudget, requireCaller } from "@sched/bus";
import {
  type availabilityRecommend,
  DURATION_MINUTES,
  type RankedBy,
  type RecommendationBody,
  type UserProfile,
} from "@sched/proto";
import { MINUTE_MS } from "@sched/time";
import { incompleteBusyOf } from "../domain/busyCompleteness.js";
import type { Interval } from "../domain/intervals.js";
import { BUFFER_TARGET_MS, recommendSlots, type RecommendedSlot } from "../domain/recommend.js";
import { fitRecommendation } from "../domain/replySize.js";
import { rankWithAI } from "../outbound/aiRanking.js";
import { busyWithCalendars, type BusyAnswer } from "../outbound/busy.js";
import { formatTimestamp, type AvailabilityDeps } from "./deps.js";
import { readHorizon } from "./horizon.js";
import { callerProfile, lookupUsers, visibleParticipants } from "../outbound/people.js";

/**
 * How many heuristic suggestions ai-ranking gets to reorder. The heuristic's
 * greedy choice makes them distinct, non-overlapping and spread over the days;
 * twice the largest `limit` leaves the ranker real choice at a small cost.
 */
const AI_CANDIDATES = 100;

/**
 * POST /v1/availability/recommended (api-spec 4.6, api-decisions 7).
 *
 * Who counts: the caller, and each participant (required or optional) with
 * an account whom contacts.v1.visibility lets the caller see; everyone else
 * is ignored. Everyone's stated buffer, the minimum notice and the quorum
 * are the domain's rules too.
 * The horizon, the search windows, the grid, the score and `emptyReason` are
 * the domain's (recommendSlots); zones and working hours come from accounts,
 * busy time of everyone who counts from meetings (in one request) and from
 * their connected calendars (through invites, under a deadline); whose
 * calendars did not answer in time is named (`busyComplete`, `incompleteBusy`).
 *
 * With `useAI` the heuristic's best AI_CANDIDATES slots go to ai-ranking under
 * a short deadline; its scores and reasons order them when it answers,
 * otherwise (or when there is nothing to rank) the heuristic's ranking answers
 * and `rankedBy` says so. An answer too large for one bus message keeps its
 * best slots only.
 */
export function recommendHandler(deps: AvailabilityDeps): Handler<typeof availabilityRecommend> {
  return async ({ body }, ctx) => {
    const caller = requireCaller(ctx);
    const now = deps.now();
    // Refuse a bad horizon before asking anyone; it is read again below on the
    // account's own zone, which is the same one unless it changed a moment ago.
    readHorizon(body, caller.timezone, now);

    const emails = body.participants.filter((e) => e !== caller.email);
    const optionalEmails = body.optionalParticipants.filter((e) => e !== caller.email);
    const users = await lookupUsers(deps.bus, { ids: [caller.userId], emails: [...emails, ...optionalEmails] });
    const me = callerProfile(users, caller);
    const horizon = readHorizon(body, me.timezone, now);
    const visible = await visibleParticipants(deps, caller, me, [...emails, ...optionalEmails], users);
    const optionalSet = new Set(optionalEmails);
    const counted = visible.filter((p) => !optionalSet.has(p.email.toLowerCase()));
    const countedOptional = visible.filter((p) => optionalSet.has(p.email.toLowerCase()));
    const people = [me, ...counted, ...countedOptional];

    const durationMs = DURATION_MINUTES[body.duration] * MINUTE_MS;
    const earliest = Math.max(horizon.start, now);
    // No busy time is needed when nothing fits anyway; meetings just outside
    // the horizon still shorten the buffer of a slot at its edge, and a
    // stated buffer keeps a slot there from them.
    const reach = Math.max(BUFFER_TARGET_MS, ...people.map(bufferMsOf));
    const answer: BusyAnswer =
      horizon.end - earliest >= durationMs
        ? await busyWithCalendars(deps.bus, deps.logger, caller.mode, people, { start: earliest - reach, end: horizon.end + reach }, deps.calendarBusyTimeoutMs)
        : { busy: new Map<string, Interval[]>(), incomplete: new Set<string>() };
    const { busy } = answer;

    const recommendation = recommendSlots({
      now,
      zone: me.timezone,
      horizon,
      timeRange: body.timeRange,
      durationMs,
      people: people.map((p) => ({
        userId: p.id,
        zone: p.timezone,
        workingHours: p.workingHours,
        busy: busy.get(p.id) ?? [],
        isCaller: p.id === me.id,
        optional: countedOptional.includes(p),
        bufferMs: bufferMsOf(p),
        label: p.email.toLowerCase(),
      })),
      minimumNoticeMs: body.minimumNoticeMinutes * MINUTE_MS,
      minimumAttendees: body.minimumAttendees,
      // The greedy choice takes its best picks first, so the first `limit` of a
      // longer run are the suggestions a run with `limit` would make.
      limit: body.useAI ? Math.max(body.limit, AI_CANDIDATES) : body.limit,
    });

    let slots: RecommendedSlot[] = recommendation.slots.slice(0, body.limit);
    let rankedBy: RankedBy = "heuristic";
    if (body.useAI && recommendation.slots.length > 0) {
      const ranked = await rankWithAI(deps, { mode: caller.mode, callerUserId: me.id, people, candidates: recommendation.slots });
      if (ranked) {
        slots = ranked.slice(0, body.limit);
        rankedBy = "ai";
      }
    }

    // A calendar that did not answer is said so: its owner is not known to be free in these slots.
    const incompleteBusy = incompleteBusyOf(people, answer.incomplete, answer.missing);
    const emailOf = new Map(people.map((p) => [p.id, p.email.toLowerCase()]));
    const reply: RecommendationBody = {
      slots: slots.map((s) => ({
        start: formatTimestamp(s.start),
        end: formatTimestamp(s.end),
        score: s.score,
        reason: s.reason,
        withinWorkingHours: s.withinWorkingHours.map((id) => emailOf.get(id)!),
        ...(s.availableParticipants ? { availableParticipants: s.availableParticipants.map((id) => emailOf.get(id)!) } : {}),
      })),
      consideredParticipants: counted.map((p) => p.email.toLowerCase()),
      consideredOptionalParticipants: countedOptional.map((p) => p.email.toLowerCase()),
      rankedBy,
      ...(recommendation.emptyReason ? { emptyReason: recommendation.emptyReason } : {}),
      ...(incompleteBusy.length > 0 ? { busyComplete: false as const, incompleteBusy } : {}),
    };
    return { status: 200, body: fitRecommendation(reply, replyBodyBudget(deps.bus.maxMessageBytes())) };
  };
}

/** The time a person keeps free around their busy time: their stated buffer, a hard rule. */
function bufferMsOf(person: UserProfile): number {
  return (person.preferences.bufferMinutes ?? 0) * MINUTE_MS;
}
