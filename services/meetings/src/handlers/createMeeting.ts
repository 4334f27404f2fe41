import { type Handler, requireCaller } from "@sched/bus";
import { newId } from "@sched/ids";
import { outboxInsert } from "@sched/outbox";
import { requestFingerprint } from "@sched/ids";
import { meetingCreated, type AnswerOf, type meetingsCreate } from "@sched/proto";
import { invitesOnCreate } from "../domain/changes.js";
import { newMeeting } from "../domain/create.js";
import { readDateTime } from "../domain/datetime.js";
import { createdEvent, eventMsgId, newEventId } from "../domain/events.js";
import { readIdempotencyKey } from "../domain/idempotency.js";
import { toMeeting } from "../domain/meeting.js";
import { insertMeeting } from "../db/queries.js";
import type { MeetingsDeps } from "./deps.js";
import { runOnce } from "./idempotent.js";

/** POST /v1/meetings → 201 with the meeting; its `meeting.created` event commits with it. */
export function createMeeting(deps: MeetingsDeps): Handler<typeof meetingsCreate> {
  return async ({ body }, ctx) => {
    const caller = requireCaller(ctx);
    const idempotencyKey = readIdempotencyKey(ctx.headers);
    const now = deps.now();
    const startTime = readDateTime(body.startTime, caller.timezone, "startTime");
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
