import type { Handler } from "@sched/bus";
import type { BusyInterval, meetingsBusy } from "@sched/proto";
import { mergeIntervals, occurrenceBusy } from "../domain/busyOccurrences.js";
import { busyIntervals } from "../db/queries.js";
import { groupAnswers } from "../domain/seriesAnswers.js";
import { exceptionsNear, occurrenceAnswersNear, seriesOfUsers } from "../db/seriesQueries.js";
import type { MeetingsDeps } from "./deps.js";

/**
 * meetings.v1.busy: every requested user, with their merged busy time in
 * [from, to) as epoch-second pairs: single meetings and time off from one
 * statement, occurrences of recurring meetings expanded over [from, to) only
 * (less those the user declined).
 */
export function busy(deps: MeetingsDeps): Handler<typeof meetingsBusy> {
  return async (request) => {
    const from = new Date(request.from);
    const to = new Date(request.to);
    const [rows, series] = await Promise.all([
      busyIntervals(deps.db, { mode: request.mode, users: request.users, from, to }),
      seriesOfUsers(deps.db, request.mode, request.users, from, to),
    ]);
    const byUser = new Map<string, BusyInterval[]>(request.users.map((u) => [u.userId, []]));
    for (const row of rows) byUser.get(row.userId)?.push([row.start, row.end]);
    if (series.length > 0) {
      const ids = series.map((s) => s.id);
      const exceptions = await exceptionsNear(deps.db, ids, from, to);
      // Declined occurrences are not busy for the decliner: their own answers, read apart from the exceptions.
      const answers = groupAnswers(await occurrenceAnswersNear(deps.db, ids, from, to, exceptions));
      for (const user of request.users) {
        const extra = occurrenceBusy(series, exceptions, answers, user, from, to);
        if (extra.length > 0) byUser.set(user.userId, mergeIntervals([...(byUser.get(user.userId) ?? []), ...extra]));
      }
    }
    return { busy: [...byUser].map(([userId, intervals]) => ({ userId, intervals })) };
  };
}
