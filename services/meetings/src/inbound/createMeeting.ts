import { type Handler, type RequestContext, requireCaller } from "@sched/bus";
import { writeOnce, type RouteRequest } from "@sched/db/idempotent-writes";
import { newId } from "@sched/ids";
import type { Knex } from "@sched/db";
import { encodedOutboxInsert, enqueueEvent } from "@sched/outbox";
import { JsonText, meetingCreated, type AnswerOf, type Caller, type Meeting, type MeetingCreateBody, type meetingsCreate } from "@sched/proto";
import { invitesOnCreate } from "../domain/changes.js";
import { newMeeting } from "../domain/create.js";
import { readDateTime } from "../domain/datetime.js";
import { createdEventText, eventMsgId, newEventId } from "../domain/events.js";
import { toMeeting } from "../domain/meeting.js";
import { newSeries, seriesCreatedEvent } from "../domain/seriesChanges.js";
import { seriesToMeeting } from "../domain/series.js";
import { insertMeetings, insertSeries } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";

/** POST /v1/meetings → 201 with the meeting; its `meeting.created` event commits with it. */
export function createMeeting(deps: MeetingsDeps): Handler<typeof meetingsCreate> {
  return async ({ body }, ctx) => {
    const caller = requireCaller(ctx);
    const now = deps.now();
    const startTime = readDateTime(body.startTime, caller.timezone, "startTime");
    const route: RouteRequest = { method: "POST", path: "/v1/meetings", body };
    if (body.recurrence !== undefined) return createSeries(deps, ctx, route, { caller, body: { ...body, recurrence: body.recurrence }, startTime, now });
    const record = newMeeting({ id: newId("mtg"), caller, body, startTime, now });
    const meeting = toMeeting(record);
    // Encoded once: the reply's body as it is sent, and the event's meeting. The event occurs at the creation's second.
    const meetingJson = JSON.stringify(meeting);
    const eventJson = createdEventText(record, meetingJson, invitesOnCreate(record.status, body.sendInvites ?? true), newEventId(), meeting.createdAt);
    const reply: AnswerOf<typeof meetingsCreate> = { status: 201, body: new JsonText<Meeting>(meetingJson) };
    const outboxRow = encodedOutboxInsert(meetingCreated, eventJson, eventMsgId(record.id, record.sequence));
    const answer = await writeOnce(deps.db, ctx, route, async (db) => {
      // In the transaction of an Idempotency-Key, on its own; otherwise with the creates of the same moment.
      if (db.isTransaction) await insertMeetings(db, [{ meeting: record, event: outboxRow }]);
      else await deps.inserts.insert({ meeting: record, event: outboxRow });
      return reply;
    });
    if (answer === reply) deps.relay.wake();
    return answer;
  };
}

/** POST with `recurrence`: a series, stored with its `meeting.created` event in one transaction. */
async function createSeries(
  deps: MeetingsDeps,
  ctx: RequestContext,
  route: RouteRequest,
  input: { caller: Caller; body: MeetingCreateBody & { recurrence: string }; startTime: Date; now: Date },
): Promise<AnswerOf<typeof meetingsCreate>> {
  const { caller, now } = input;
  const series = newSeries({ id: newId("mtg"), caller, body: input.body, startTime: input.startTime, now });
  const event = seriesCreatedEvent(series, invitesOnCreate(series.status, input.body.sendInvites ?? true), newEventId(), now);
  const reply: AnswerOf<typeof meetingsCreate> = { status: 201, body: seriesToMeeting(series) };
  const write = (db: Knex) =>
    db.transaction(async (trx) => {
      await insertSeries(trx, series);
      await enqueueEvent(trx, meetingCreated, event, eventMsgId(series.id, series.sequence));
      return reply;
    });
  const answer = await writeOnce(deps.db, ctx, route, write);
  if (answer === reply) deps.relay.wake();
  return answer;
}
