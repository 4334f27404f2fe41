import type { Handler } from "@sched/bus";
import type { BusyInterval, meetingsBusy } from "@sched/proto";
import { mergeIntervals, occurrenceBusy } from "../domain/busyOccurrences.js";
import { busyIntervals, seriesVersionsSql } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/**
 * meetings.v1.busy: every requested user, with their merged busy time in
 * [from, to) as epoch-second pairs: single meetings and time off from one
 * statement, which also names the versions of the users' confirmed series;
 * their occurrences are expanded over [from, to) only, from the series kept
 * under those versions (db/seriesStore.ts) with their occurrences' own
 * answers, less those the user declined: no statement more once kept.
 */
export function busy(deps: MeetingsDeps): Handler<typeof meetingsBusy> {
  return async (request) => {
    const from = new Date(request.from);
    const to = new Date(request.to);
    const { intervals, beside } = await busyIntervals(
      deps.db,
      { mode: request.mode, users: request.users, from, to },
      seriesVersionsSql({ mode: request.mode, users: request.users, from, to, confirmedOnly: true }),
    );
    const byUser = new Map<string, BusyInterval[]>(request.users.map((u) => [u.userId, []]));
    for (const row of intervals) byUser.get(row.userId)?.push([row.start, row.end]);
    if (beside) {
      // Declined occurrences are not busy for the decliner: their own answers are kept with each series.
      const kept = await deps.series.readNamed(deps.db, request.mode, beside);
      for (const user of request.users) {
        const extra = occurrenceBusy(kept, user, from, to);
        if (extra.length > 0) byUser.set(user.userId, mergeIntervals([...(byUser.get(user.userId) ?? []), ...extra]));
      }
    }
    return { busy: [...byUser].map(([userId, intervals]) => ({ userId, intervals })) };
  };
}
