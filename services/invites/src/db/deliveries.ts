import { preparedName, type Knex } from "@sched/db";
import type { InviteChannel, InviteKind, InviteState, Meeting, Mode } from "@sched/proto";
import { currentTraceContext, type TraceCarrier } from "@sched/telemetry";
import type { MeetingChange, PlannedDelivery } from "../domain/plan.js";

/** A delivery row as the worker and the invites route read it. */
export interface DeliveryRecord {
  meetingId: string;
  sequence: number;
  email: string;
  kind: InviteKind;
  channel: InviteChannel;
  state: InviteState;
  attempts: number;
  lastError: string | null;
  updatedAt: Date;
}

/** A change the worker has claimed: leased to this replica until it settles or the lease runs out. */
export interface ClaimedChange extends MeetingChange {
  attempts: number;
  traceContext: TraceCarrier | null;
}

interface DeliveryRow {
  meeting_id: string;
  sequence: number;
  email: string;
  kind: InviteKind;
  channel: InviteChannel;
  state: InviteState;
  attempts: number;
  last_error: string | null;
  updated_at: Date | string;
}

interface ChangeRow {
  meeting_id: string;
  sequence: number;
  mode: Mode;
  organizer_user_id: string;
  organizer_email: string;
  meeting: Meeting | string;
  attempts: number;
  trace_context: TraceCarrier | string | null;
}

const toDelivery = (row: DeliveryRow): DeliveryRecord => ({
  meetingId: row.meeting_id,
  sequence: row.sequence,
  email: row.email,
  kind: row.kind,
  channel: row.channel,
  state: row.state,
  attempts: row.attempts,
  lastError: row.last_error,
  updatedAt: row.updated_at instanceof Date ? row.updated_at : new Date(row.updated_at),
});

const toChange = (row: ChangeRow): ClaimedChange => ({
  meetingId: row.meeting_id,
  sequence: row.sequence,
  mode: row.mode,
  organizer: { userId: row.organizer_user_id, email: row.organizer_email },
  meeting: typeof row.meeting === "string" ? (JSON.parse(row.meeting) as Meeting) : row.meeting,
  attempts: row.attempts,
  traceContext: typeof row.trace_context === "string" ? (JSON.parse(row.trace_context) as TraceCarrier) : row.trace_context,
});

/**
 * Records a change and what it owes, once, as ONE statement (atomic, one
 * round trip): a redelivered event hits the primary keys and adds nothing.
 * The deliveries go through Google when the organizer has an active Google
 * connection, by e-mail otherwise. In test mode the rows are final at once
 * (`simulated`, the change done), so nothing is ever handed to the worker.
 * Returns how many delivery rows are new, and their channel.
 */
export async function recordChange(db: Knex, change: MeetingChange, planned: PlannedDelivery[]): Promise<{ added: number; channel: InviteChannel }> {
  const simulated = change.mode === "test";
  const sql = `with channel as (
       select case when exists (select 1 from calendar_connections where user_id = ? and provider = 'google' and status = 'active')
                   then 'google' else 'email' end as name
     ),
     change as (
       insert into meeting_changes (meeting_id, sequence, mode, organizer_user_id, organizer_email, meeting, state, trace_context)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, ?::jsonb)
       on conflict (meeting_id, sequence) do nothing
     ),
     delivery as (
       insert into deliveries (meeting_id, sequence, email, kind, channel, state)
       select ?, ?, p.email, p.kind, channel.name, ? from unnest(?::text[], ?::text[]) as p(email, kind) cross join channel
       on conflict (meeting_id, sequence, email, kind) do nothing
       returning 1
     )
     select (select name from channel) as channel, (select count(*) from delivery)::int as added`;
  const result = await db
    .raw(sql, [
      change.organizer.userId,
      ...[change.meetingId, change.sequence, change.mode, change.organizer.userId, change.organizer.email.toLowerCase()],
      ...[JSON.stringify(change.meeting), simulated ? "done" : "pending", JSON.stringify(currentTraceContext() ?? null)],
      ...[change.meetingId, change.sequence, simulated ? "simulated" : "pending"],
      planned.map((p) => p.email),
      planned.map((p) => p.kind),
    ])
    .options({ name: preparedName("record_change", sql) });
  const row = result.rows[0] as { channel: InviteChannel; added: number };
  return { added: row.added, channel: row.channel };
}

/**
 * Leases up to `limit` due changes to this worker. A meeting's changes go
 * out in order: one waits while an earlier change of the same meeting is
 * still pending (an update must not reach Google before the insert). Rows
 * locked by another replica are skipped, and a lease that runs out (a
 * worker that died mid-delivery) makes the change due again.
 */
export async function claimDueChanges(db: Knex, owner: string, limit: number, leaseMs: number): Promise<ClaimedChange[]> {
  const result = await db.raw(
    `update meeting_changes c
        set attempts = c.attempts + 1, lease_owner = ?, lease_until = clock_timestamp() + (? * interval '1 millisecond')
      where (c.meeting_id, c.sequence) in (
        select d.meeting_id, d.sequence from meeting_changes d
         where d.state = 'pending' and d.next_attempt_at <= clock_timestamp()
           and (d.lease_until is null or d.lease_until < clock_timestamp())
           and not exists (select 1 from meeting_changes e where e.meeting_id = d.meeting_id and e.sequence < d.sequence and e.state = 'pending')
         order by d.next_attempt_at
         limit ?
         for update skip locked)
      returning c.meeting_id, c.sequence, c.mode, c.organizer_user_id, c.organizer_email, c.meeting, c.attempts, c.trace_context`,
    [owner, leaseMs, limit],
  );
  return (result.rows as ChangeRow[]).map(toChange);
}

/**
 * Extends this worker's lease on a change it is still delivering; false when
 * the lease was lost (it ran out and another replica took the change), and
 * the worker must then send nothing more for it.
 */
export async function renewLease(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">, owner: string, leaseMs: number): Promise<boolean> {
  const updated = await db("meeting_changes")
    .where({ meeting_id: change.meetingId, sequence: change.sequence, state: "pending", lease_owner: owner })
    .andWhere("lease_until", ">", db.raw("clock_timestamp()"))
    .update({ lease_until: db.raw("clock_timestamp() + (? * interval '1 millisecond')", [leaseMs]) });
  return updated > 0;
}

/** When the next pending change falls due (for the worker's sleep), or undefined when none waits. */
export async function nextDueAt(db: Knex): Promise<Date | undefined> {
  const row = (await db("meeting_changes").where({ state: "pending" }).min({ at: "next_attempt_at" }).first()) as { at: Date | string | null } | undefined;
  return row?.at ? new Date(row.at) : undefined;
}

export async function pendingDeliveries(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">): Promise<DeliveryRecord[]> {
  const rows = (await db("deliveries").where({ meeting_id: change.meetingId, sequence: change.sequence, state: "pending" }).orderBy("email")) as DeliveryRow[];
  return rows.map(toDelivery);
}

type DeliveryKey = Pick<DeliveryRecord, "meetingId" | "sequence" | "email" | "kind">;

/** Settles one delivery; only a pending row moves, so a settled one is never overwritten. */
export async function settleDelivery(db: Knex, key: DeliveryKey, outcome: { state: "sent" | "failed"; channel: InviteChannel; attempts: number; error?: string }): Promise<void> {
  await db("deliveries")
    .where({ meeting_id: key.meetingId, sequence: key.sequence, email: key.email, kind: key.kind, state: "pending" })
    .update({ state: outcome.state, channel: outcome.channel, attempts: outcome.attempts, last_error: outcome.error ?? null, updated_at: db.fn.now() });
}

/** Notes a failed attempt on the change's pending deliveries, which stay pending. */
export async function noteAttemptFailed(db: Knex, change: Pick<ClaimedChange, "meetingId" | "sequence" | "attempts">, channel: InviteChannel, error: string): Promise<void> {
  await db("deliveries")
    .where({ meeting_id: change.meetingId, sequence: change.sequence, state: "pending" })
    .update({ channel, attempts: change.attempts, last_error: error, updated_at: db.fn.now() });
}

/**
 * The change is settled (every delivery sent or failed): the worker is done
 * with it. Only the lease's holder settles it; false when another worker
 * has taken the change over.
 */
export async function finishChange(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">, owner: string, state: "done" | "failed", error?: string): Promise<boolean> {
  const updated = await db("meeting_changes")
    .where({ meeting_id: change.meetingId, sequence: change.sequence, lease_owner: owner })
    .update({ state, lease_until: null, last_error: error ?? null });
  return updated > 0;
}

/** Gives the change back to the queue, due again after `delayMs`; as finishChange, only by the lease's holder. */
export async function scheduleRetry(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">, owner: string, delayMs: number, error: string): Promise<boolean> {
  const updated = await db("meeting_changes")
    .where({ meeting_id: change.meetingId, sequence: change.sequence, lease_owner: owner })
    .update({ lease_until: null, last_error: error, next_attempt_at: db.raw("clock_timestamp() + (? * interval '1 millisecond')", [delayMs]) });
  return updated > 0;
}

/** The channel that carried an earlier change of the meeting, if any did: a meeting keeps its channel. */
export async function earlierChannel(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">): Promise<InviteChannel | undefined> {
  const row = (await db("deliveries")
    .where({ meeting_id: change.meetingId, state: "sent" })
    .andWhere("sequence", "<", change.sequence)
    .orderBy("sequence", "desc")
    .first("channel")) as { channel: InviteChannel } | undefined;
  return row?.channel;
}

/** The newest delivery to each participant of a meeting, in address order. */
export async function latestDeliveries(db: Knex, meetingId: string): Promise<DeliveryRecord[]> {
  const rows = (await db
    .select("*")
    .from(db("deliveries").where({ meeting_id: meetingId }).distinctOn("email").orderBy([{ column: "email" }, { column: "sequence", order: "desc" }, { column: "kind" }]).as("latest"))
    .orderBy("email")) as DeliveryRow[];
  return rows.map(toDelivery);
}

// ---- the provider's copy of a meeting --------------------------------------------

export async function findProviderEvent(db: Knex, meetingId: string): Promise<{ connectionId: string; providerEventId: string } | undefined> {
  const row = (await db("provider_events").where({ meeting_id: meetingId }).first()) as { connection_id: string; provider_event_id: string } | undefined;
  return row ? { connectionId: row.connection_id, providerEventId: row.provider_event_id } : undefined;
}

export async function saveProviderEvent(db: Knex, meetingId: string, connectionId: string, providerEventId: string): Promise<void> {
  await db("provider_events")
    .insert({ meeting_id: meetingId, connection_id: connectionId, provider_event_id: providerEventId })
    .onConflict("meeting_id")
    .merge({ connection_id: connectionId, provider_event_id: providerEventId, updated_at: db.fn.now() });
}
