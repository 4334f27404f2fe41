import { bind } from "@sched/bus";
import { isEmbedded } from "@sched/db";
import { sweepExpiredIdempotencyKeys } from "@sched/db/idempotent-writes";
import { startOutboxRelay } from "@sched/outbox";
import { meetingsBusy, meetingsCreate, meetingsDelete, meetingsGet, meetingsList, meetingsRecordResponse, meetingStreamEvents, meetingsUpdate, timeOffCreate, timeOffDelete, timeOffList } from "@sched/proto";
import { defineService } from "@sched/runtime";
import { z } from "zod";
import { migrations } from "./db/migrations/index.js";
import { MeetingInserts } from "./db/insertBatches.js";
import { insertMeetings } from "./db/queries.js";
import { SeriesStore } from "./db/seriesStore.js";
import { busy } from "./inbound/busy.js";
import { createMeeting } from "./inbound/createMeeting.js";
import { deleteMeeting } from "./inbound/deleteMeeting.js";
import type { MeetingsDeps } from "./inbound/deps.js";
import { getMeeting } from "./inbound/getMeeting.js";
import { listMeetings } from "./inbound/listMeetings.js";
import { createTimeOff, deleteTimeOffHandler, listTimeOffHandler } from "./inbound/timeOff.js";
import { recordResponse } from "./inbound/recordResponse.js";
import { updateMeeting } from "./inbound/updateMeeting.js";
import { lingeringWake } from "./outbound/lingeringWake.js";

const RELAY_POLL_MS = 1_000;
/**
 * How long the relay lingers after a commit before it publishes: commits in
 * that window go out in one batch (one relay transaction of five statements)
 * instead of one each. Events wait at most this long; in return a relay
 * transaction per create no longer costs more than the create itself (on
 * embedded Postgres, where statements run one at a time, it tripled creates/s).
 */
const RELAY_LINGER_MS = 20;

/**
 * Meetings: the user's calendar — the public meetings API, the user's time
 * off, the busy intervals (of both) availability asks for, and the MEETINGS event stream fed through the outbox.
 */
export const meetingsService = defineService({
  name: "meetings",
  schema: "meetings",
  migrations,
  config: z.object({}),
  start: async ({ bus, db, logger }) => {
    const relay = startOutboxRelay({ db, bus, logger, events: meetingStreamEvents, pollMs: RELAY_POLL_MS, wokenByEveryWrite: true });
    const lingering = lingeringWake(relay, RELAY_LINGER_MS);
    const deps: MeetingsDeps = { db, inserts: new MeetingInserts(db, insertMeetings, { gathersTurn: isEmbedded(db) }), relay: lingering, now: () => new Date(), maxMessageBytes: () => bus.maxMessageBytes(), series: new SeriesStore() };
    const served = await bus.serve({ name: "meetings", version: "1.0.0", description: "Meetings, calendars and meeting events" }, [
      bind(meetingsList, listMeetings(deps)),
      bind(meetingsCreate, createMeeting(deps)),
      bind(meetingsGet, getMeeting(deps)),
      bind(meetingsUpdate, updateMeeting(deps)),
      bind(meetingsDelete, deleteMeeting(deps)),
      bind(meetingsBusy, busy(deps)),
      bind(timeOffCreate, createTimeOff(deps)),
      bind(timeOffList, listTimeOffHandler(deps)),
      bind(timeOffDelete, deleteTimeOffHandler(deps)),
      bind(meetingsRecordResponse, recordResponse(deps, logger)),
    ]);
    const stopSweeping = sweepExpiredIdempotencyKeys(db, logger);
    return {
      stop: async () => {
        await served.stop();
        stopSweeping();
        lingering.cancel();
        await relay.stop();
      },
    };
  },
});
