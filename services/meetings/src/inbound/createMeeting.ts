import { type Handler, requireCaller } from "@sched/bus";
import { newId } from "@sched/ids";
import type { Knex } from "@sched/db";
import { enqueueEvent, outboxInsert } from "@sched/outbox";
import { requestFingerprint } from "@sched/ids";
import { meetingCreated, type AnswerOf, type Caller, type MeetingCreateBody, type meetingsCreate } from "@sched/proto";
import { invitesOnCreate } from "../domain/changes.js";
import { newMeeting } from "../domain/create.js";
import { readDateTime } from "../domain/datetime.js";
import { createdEvent, eventMsgId, newEventId } from "../domain/events.js";
import { readIdempotencyKey } from "../domain/idempotency.js";
import { toMeeting } from "../domain/meeting.js";
import { newSeries, seriesCreatedEvent } from "../domain/seriesChanges.js";
import { seriesToMeeting } from "../domain/series.js";
import { insertMeeting } from "../db/queries.js";
import { insertSeries } from "../db/seriesQueries.js";
import type { MeetingsDeps } from "./deps.js";
import { runOnce } from "./idempotent.js";

/** POST /v1/meetings → 201 with the meeting; its `meeting.created` event commits with it. */
export function createMeeting(deps: MeetingsDeps): Handler<typeof meetingsCreate> {
  return async ({ body }, ctx) => {
    const caller = requireCaller(ctx);
    const idempotencyKey = readIdempotencyKey(ctx.headers);
    const now = deps.now();
    const startTime = readDateTime(body.startTime, caller.timezone, "startTime");
    if (body.recurrence !== undefined) return createSeries(deps, { caller, body: { ...body, recurrence: body.recurrence }, startTime, now, idempotencyKey, deadline: ctx.deadline });
    const record = newMeeting({ id: newId("mtg"), caller, body, startTime, now });
    const event = createdEvent(record, invitesOnCreate(record.status, body.sendInvites ?? true), newEventId(), now);
    const reply: AnswerOf<typeof meetingsCreate> = { status: 201, body: toMeeting(record) };
    const outboxRow = outboxInsert(meetingCreated, event, eventMsgId(record.id, record.sequence));

    if (idempotencyKey === undefined) {
      await insertMeeting(deps.db, record, outboxRow);
    } else {
      const claim = { apiKeyId: caller.apiKeyId, key: idempotencyKey, fingerprint: requestFingerprint("POST", "/v1/meetings", body) };
      const replay = await runOnce(deps.db, claim, ctx.deadline, reply, (trx) => insertMeeting(trx, record, outboxRow));
      if (replay) return replay;
    }
    deps.relay.wake();
    return reply;
  };
}

/** POST with `recurrence`: a series, stored with its `meeting.created` event in one transaction. */
async function createSeries(
  deps: MeetingsDeps,
  input: { caller: Caller; body: MeetingCreateBody & { recurrence: string }; startTime: Date; now: Date; idempotencyKey: string | undefined; deadline: number },
): Promise<AnswerOf<typeof meetingsCreate>> {
  const { caller, now } = input;
  const series = newSeries({ id: newId("mtg"), caller, body: input.body, startTime: input.startTime, now });
  const event = seriesCreatedEvent(series, invitesOnCreate(series.status, input.body.sendInvites ?? true), newEventId(), now);
  const reply: AnswerOf<typeof meetingsCreate> = { status: 201, body: seriesToMeeting(series) };
  const write = async (trx: Knex.Transaction) => {
    await insertSeries(trx, series);
    await enqueueEvent(trx, meetingCreated, event, eventMsgId(series.id, series.sequence));
  };
  if (input.idempotencyKey === undefined) {
    await deps.db.transaction(write);
  } else {
    const claim = { apiKeyId: caller.apiKeyId, key: input.idempotencyKey, fingerprint: requestFingerprint("POST", "/v1/meetings", input.body) };
    const replay = await runOnce(deps.db, claim, input.deadline, reply, write);
    if (replay) return replay;
  }
  deps.relay.wake();
  return reply;
}
