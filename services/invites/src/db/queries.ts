import { namedStatement, runNamed, type Knex } from "@sched/db";
import { enqueueEvent } from "@sched/outbox";
import {
  inviteSent,
  occurrenceIdOf,
  type CalendarProvider,
  type ConnectionStatus,
  type InviteChannel,
  type InviteKind,
  type InviteState,
  type Meeting,
  type Mode,
  type SeriesOfEvent,
} from "@sched/proto";
import type { TraceCarrier } from "@sched/telemetry";
import { inviteEventOf, type SettlingChange } from "../domain/inviteEvents.js";
import { orderingIdOf, type MeetingChange, type PlannedDelivery } from "../domain/plan.js";
import { calendarMeetingId } from "../domain/series.js";

// ---- calendar connections -------------------------------------------------------------

export interface ConnectionRecord {
  id: string;
  userId: string;
  provider: CalendarProvider;
  accountEmail: string | null;
  sealedTokens: string;
  status: ConnectionStatus;
  createdAt: Date;
  serverUrl: string | null;
  isDefault: boolean;
  /** Null: the provider's default calendars. */
  busyCalendars: string[] | null;
}

interface ConnectionRow {
  id: string;
  user_id: string;
  provider: CalendarProvider;
  account_email: string | null;
  sealed_tokens: string;
  status: ConnectionStatus;
  created_at: Date | string;
  server_url: string | null;
  is_default: boolean;
  busy_calendars: string[] | null;
}

const toRecord = (row: ConnectionRow): ConnectionRecord => ({
  id: row.id,
  userId: row.user_id,
  provider: row.provider,
  accountEmail: row.account_email,
  sealedTokens: row.sealed_tokens,
  status: row.status,
  createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  serverUrl: row.server_url,
  isDefault: row.is_default,
  busyCalendars: row.busy_calendars,
});

export async function listConnections(db: Knex, userId: string): Promise<ConnectionRecord[]> {
  const rows = await db<ConnectionRow>("calendar_connections").where({ user_id: userId }).orderBy([{ column: "created_at", order: "desc" }, { column: "id", order: "desc" }]);
  return rows.map(toRecord);
}

/** The connection invites and busy time go through: the user's active one for the provider. */
export async function activeConnection(db: Knex, userId: string, provider: CalendarProvider = "google"): Promise<ConnectionRecord | undefined> {
  const row = await db<ConnectionRow>("calendar_connections").where({ user_id: userId, provider, status: "active" }).first();
  return row ? toRecord(row) : undefined;
}

/** The active connections of several users, every provider. */
export async function activeConnections(db: Knex, userIds: readonly string[]): Promise<ConnectionRecord[]> {
  if (userIds.length === 0) return [];
  const rows = await db<ConnectionRow>("calendar_connections").whereIn("user_id", userIds).andWhere({ status: "active" });
  return rows.map(toRecord);
}

/** One connection of the user; undefined for anyone else's. */
/** Whether the user has a connection whose busy time is read (one that is not broken). */
export async function hasActiveConnection(db: Knex, userId: string): Promise<boolean> {
  return (await db("calendar_connections").where({ user_id: userId, status: "active" }).first("id")) !== undefined;
}

export async function findConnection(db: Knex, userId: string, connectionId: string): Promise<ConnectionRecord | undefined> {
  const row = (await db("calendar_connections").where({ id: connectionId, user_id: userId }).first()) as ConnectionRow | undefined;
  return row ? toRecord(row) : undefined;
}

/** A connection by id alone, for work that is no user's request. */
export async function connectionById(db: Knex, connectionId: string): Promise<ConnectionRecord | undefined> {
  const row = (await db("calendar_connections").where({ id: connectionId }).first()) as ConnectionRow | undefined;
  return row ? toRecord(row) : undefined;
}

/** The connection the user chose for invites, when it works. */
export async function defaultConnection(db: Knex, userId: string): Promise<ConnectionRecord | undefined> {
  const row = (await db("calendar_connections").where({ user_id: userId, is_default: true, status: "active" }).first()) as ConnectionRow | undefined;
  return row ? toRecord(row) : undefined;
}

/** Changes which calendars count as busy, and makes the connection the user's default (and no other). */
export async function updateConnectionSettings(db: Knex, userId: string, connectionId: string, change: { busyCalendars?: string[] | null; makeDefault?: boolean }): Promise<ConnectionRecord | undefined> {
  return db.transaction(async (trx) => {
    if (change.makeDefault) await trx("calendar_connections").where({ user_id: userId, is_default: true }).whereNot({ id: connectionId }).update({ is_default: false });
    const rows = (await trx("calendar_connections")
      .where({ id: connectionId, user_id: userId })
      .update({
        ...(change.busyCalendars !== undefined ? { busy_calendars: change.busyCalendars } : {}),
        ...(change.makeDefault ? { is_default: true } : {}),
        updated_at: trx.fn.now(),
      })
      .returning("*")) as ConnectionRow[];
    return rows[0] ? toRecord(rows[0]) : undefined;
  });
}

/**
 * Stores a grant for the user and provider. Connecting again replaces the
 * grant (and mends a broken connection) under a new id; `seal` gets the id
 * the tokens are bound to.
 */
export async function upsertConnection(
  db: Knex,
  input: { id: string; userId: string; provider: CalendarProvider; accountEmail: string | null; serverUrl?: string },
  seal: (connectionId: string) => string,
): Promise<ConnectionRecord> {
  const serverUrl = input.serverUrl ?? null;
  const rows = (await db("calendar_connections")
    .insert({ id: input.id, user_id: input.userId, provider: input.provider, account_email: input.accountEmail, sealed_tokens: seal(input.id), status: "active", server_url: serverUrl })
    .onConflict(["user_id", "provider"])
    .merge({ id: input.id, account_email: input.accountEmail, sealed_tokens: seal(input.id), status: "active", server_url: serverUrl, busy_calendars: null, created_at: db.fn.now(), updated_at: db.fn.now() })
    .returning("*")) as ConnectionRow[];
  return toRecord(rows[0]!);
}

export async function updateSealedTokens(db: Knex, connectionId: string, sealedTokens: string): Promise<void> {
  await db("calendar_connections").where({ id: connectionId }).update({ sealed_tokens: sealedTokens, updated_at: db.fn.now() });
}

export async function markBroken(db: Knex, connectionId: string): Promise<void> {
  await db("calendar_connections").where({ id: connectionId }).update({ status: "broken", updated_at: db.fn.now() });
}

export async function deleteConnection(db: Knex, userId: string, connectionId: string): Promise<boolean> {
  return (await db("calendar_connections").where({ id: connectionId, user_id: userId }).delete()) > 0;
}

// ---- consent in progress -------------------------------------------------------

/** A consent in progress: who started it, for which provider, and whether in the dashboard (its callback then sends the browser back there). */
export interface OAuthState {
  stateHash: string;
  userId: string;
  provider: CalendarProvider;
  fromDashboard: boolean;
  expiresAt: Date;
}

export async function saveOAuthState(db: Knex, state: OAuthState): Promise<void> {
  await db("oauth_states").where("expires_at", "<", db.fn.now()).delete();
  await db("oauth_states").insert({ state_hash: state.stateHash, user_id: state.userId, expires_at: state.expiresAt, provider: state.provider, from_dashboard: state.fromDashboard });
}

/** Takes a state once: whose it is and where it started, or undefined when unknown, used, expired or another provider's. */
export async function takeOAuthState(db: Knex, stateHash: string, provider: CalendarProvider): Promise<{ userId: string; fromDashboard: boolean } | undefined> {
  const rows = (await db("oauth_states")
    .where({ state_hash: stateHash, provider })
    .andWhere("expires_at", ">", db.fn.now())
    .delete()
    .returning(["user_id", "from_dashboard"])) as Array<{ user_id: string; from_dashboard: boolean }>;
  const row = rows[0];
  return row ? { userId: row.user_id, fromDashboard: row.from_dashboard } : undefined;
}

// ---- meeting changes and their deliveries (the ledger) --------------------------------

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
  /** Why e-mail carried it rather than the organizer's calendar, when the calendar said (a rule it cannot say). */
  fallbackReason: string | null;
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
  /** Absent from rows a statement returned without it. */
  fallback_reason?: string | null;
  updated_at: Date | string;
}

interface ChangeRow {
  meeting_id: string;
  sequence: number;
  mode: Mode;
  organizer_user_id: string;
  organizer_email: string;
  /** Kept while the change is pending: a claimed change always has it. */
  meeting: Meeting | string;
  series: SeriesOfEvent | string | null;
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
  fallbackReason: row.fallback_reason ?? null,
  updatedAt: row.updated_at instanceof Date ? row.updated_at : new Date(row.updated_at),
});

const toChange = (row: ChangeRow): ClaimedChange => ({
  meetingId: row.meeting_id,
  sequence: row.sequence,
  mode: row.mode,
  organizer: { userId: row.organizer_user_id, email: row.organizer_email },
  meeting: typeof row.meeting === "string" ? (JSON.parse(row.meeting) as Meeting) : row.meeting,
  series: typeof row.series === "string" ? (JSON.parse(row.series) as SeriesOfEvent) : row.series,
  attempts: row.attempts,
  traceContext: typeof row.trace_context === "string" ? (JSON.parse(row.trace_context) as TraceCarrier) : row.trace_context,
});

/** A change to record with what it owes, and the trace context of the request that caused it. */
export interface OwedChange {
  change: MeetingChange;
  planned: PlannedDelivery[];
  traceContext: TraceCarrier | null;
}

/** What recording a change did: how many of its delivery rows are new, and their channel. */
export interface RecordedChange {
  meetingId: string;
  sequence: number;
  mode: Mode;
  added: number;
  channel: InviteChannel;
}

/**
 * Deletes the settled deliveries that a newer sent or simulated one to the
 * same participant of the meeting replaces; `newer` is a relation of
 * delivery rows. So a meeting's ledger keeps one settled delivery per
 * participant however often it changes, and a key per change (what makes a
 * redelivered event add nothing).
 */
const replaceEarlierDeliveries = (newer: string) =>
  `delete from deliveries d using ${newer} n
    where exists (select from ${newer} where sequence > 1) and d.meeting_id = any (array(select meeting_id from ${newer} where sequence > 1))
      and n.state in ('sent', 'simulated') and d.meeting_id = n.meeting_id and d.email = n.email and d.sequence < n.sequence and d.state <> 'pending'`;

/** recordChanges's statement, named once: sent by name straight to a pooled connection (runNamed), without knex building it on every batch. */
const RECORD_CHANGES = namedStatement(
  "record_changes",
  `with given as (
     select distinct on (meeting_id, sequence) *
       from jsonb_to_recordset(?::jsonb) as g(position integer, meeting_id text, sequence integer, mode text, organizer_user_id text,
         organizer_email text, meeting jsonb, series_id text, series jsonb, trace_context jsonb, planned jsonb)
      order by meeting_id, sequence, position
   ),
   routed as (
     select g.*, case when exists (select 1 from calendar_connections c where c.user_id = g.organizer_user_id and c.provider = 'google' and c.status = 'active')
                      then 'google' else 'email' end as channel,
            g.mode = 'live' and jsonb_array_length(g.planned) > 0 as owed
       from given g
   ),
   change as (
     insert into meeting_changes (meeting_id, sequence, mode, organizer_user_id, organizer_email, meeting, series_id, series, state, trace_context)
     select meeting_id, sequence, mode, organizer_user_id, organizer_email, case when owed then meeting end, series_id, case when owed then series end,
            case when owed then 'pending' else 'done' end, case when owed then trace_context end
       from routed
     on conflict (meeting_id, sequence) do nothing
     returning meeting_id, sequence
   ),
   delivery as (
     insert into deliveries (meeting_id, sequence, email, kind, channel, state)
     select r.meeting_id, r.sequence, p.email, p.kind, r.channel, case when r.mode = 'test' then 'simulated' else 'pending' end
       from routed r join change using (meeting_id, sequence) cross join lateral jsonb_to_recordset(r.planned) as p(email text, kind text)
     on conflict (meeting_id, sequence, email, kind) do nothing
     returning meeting_id, sequence, email, kind, channel, state, attempts, last_error, updated_at
   ),
   replaced as (${replaceEarlierDeliveries("delivery")}),
   simulated as (
     insert into outbox (subject, payload, msg_id)
     select ?, jsonb_build_object('eventId', s.id, 'meetingId', d.meeting_id, 'mode', 'test',
              'organizer', jsonb_build_object('userId', r.organizer_user_id, 'email', r.organizer_email),
              'invite', jsonb_build_object('meetingId', d.meeting_id, 'email', d.email, 'kind', d.kind, 'sequence', d.sequence, 'state', d.state,
                'channel', d.channel, 'attempts', d.attempts, 'lastError', d.last_error, 'updatedAt', s.at),
              'occurredAt', s.at), s.id
       from delivery d join routed r using (meeting_id, sequence)
       cross join lateral (select 'invite_' || md5(d.state || '.' || d.meeting_id || '.' || d.sequence || '.' || d.kind || '.' || d.email) as id,
                                  to_char(d.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at) s
      where d.state = 'simulated'
     on conflict (msg_id) do nothing
   )
   select r.meeting_id, r.sequence, r.mode, r.channel, coalesce(a.added, 0)::int as added
     from routed r
     left join (select meeting_id, sequence, count(*) as added from delivery group by meeting_id, sequence) a using (meeting_id, sequence)
    order by r.position`,
);

/**
 * Records changes and what they owe, once, as ONE statement however many
 * (atomic, one round trip): the change's row is the record that it was
 * seen, so a redelivered event finds it and adds nothing. Every change is
 * recorded, one that owes nothing as done at once, so the next change of its
 * meeting can tell it has arrived (claimDueChanges). A change's deliveries go
 * through Google when its organizer has an active Google connection, by
 * e-mail otherwise. In test mode the rows are final at once (`simulated`,
 * the change done), so nothing is ever handed to the worker. Only a change
 * the worker will deliver keeps the meeting and trace context it needs; and
 * a simulated delivery replaces the earlier ones to its participant (as
 * finishChange does for live ones), and publishes its test `invite.sent`
 * event through the outbox (settlementId's id, spelled in SQL). Returns one
 * result per distinct change, in the order given.
 */
export async function recordChanges(db: Knex, owed: readonly OwedChange[]): Promise<RecordedChange[]> {
  if (owed.length === 0) return [];
  const given = owed.map(({ change, planned, traceContext }, position) => {
    // What only the worker reads travels only for a change it will deliver (the statement's `owed`): the rest are stored without it.
    const delivered = change.mode === "live" && planned.length > 0;
    return {
      position,
      meeting_id: change.meetingId,
      sequence: change.sequence,
      mode: change.mode,
      organizer_user_id: change.organizer.userId,
      organizer_email: change.organizer.email.toLowerCase(),
      meeting: delivered ? change.meeting : null,
      series_id: orderingIdOf(change),
      series: delivered ? change.series : null,
      trace_context: delivered ? traceContext : null,
      planned,
    };
  });
  const rows = await runNamed<{ meeting_id: string; sequence: number; mode: Mode; channel: InviteChannel; added: number }>(db, RECORD_CHANGES, [JSON.stringify(given), inviteSent.subject]);
  return rows.map((row) => ({
    meetingId: row.meeting_id,
    sequence: row.sequence,
    mode: row.mode,
    added: row.added,
    channel: row.channel,
  }));
}

/**
 * How long a change waits for the change before it to be recorded. Replicas
 * record batches side by side, so a meeting's change can be recorded just
 * before its predecessor; a predecessor that never comes is one recorded
 * before every change was (they skipped those owing nothing), or one whose
 * replica died holding it, redelivered after JetStream's 30-second
 * acknowledgement wait.
 */
export const PREDECESSOR_GRACE_SECONDS = 120;

/**
 * The meeting a change is ordered among (orderingIdOf): its own, or for a
 * series and its occurrences, which share one sequence counter, the series.
 */
const orderedAmong = (c: string) => `coalesce(${c}.series_id, ${c}.meeting_id)`;

/** The meeting's previous change, when there is one, has not been recorded (and the grace is not over). */
const awaitsPredecessor = (c: string) =>
  `(${c}.sequence > 1 and ${c}.created_at > clock_timestamp() - interval '${PREDECESSOR_GRACE_SECONDS} seconds'
    and not exists (select 1 from meeting_changes p where ${orderedAmong("p")} = ${orderedAmong(c)} and p.sequence = ${c}.sequence - 1))`;

/** An earlier change of the same meeting (or series) is still to be delivered. */
const followsPending = (c: string) =>
  `exists (select 1 from meeting_changes e where ${orderedAmong("e")} = ${orderedAmong(c)} and e.sequence < ${c}.sequence and e.state = 'pending')`;

/**
 * Leases up to `limit` due changes to this worker. A meeting's changes go
 * out in order: one waits until the change before it is recorded and no
 * earlier change of the meeting is pending (an update must not reach Google
 * before the insert). Rows locked by another replica are skipped, and a
 * lease that runs out (a worker that died mid-delivery) makes the change
 * due again.
 */
export async function claimDueChanges(db: Knex, owner: string, limit: number, leaseMs: number): Promise<ClaimedChange[]> {
  const result = await db.raw(
    `update meeting_changes c
        set attempts = c.attempts + 1, lease_owner = ?, lease_until = clock_timestamp() + (? * interval '1 millisecond')
      where (c.meeting_id, c.sequence) in (
        select d.meeting_id, d.sequence from meeting_changes d
         where d.state = 'pending' and d.next_attempt_at <= clock_timestamp()
           and (d.lease_until is null or d.lease_until < clock_timestamp())
           and not ${followsPending("d")} and not ${awaitsPredecessor("d")}
         order by d.next_attempt_at
         limit ?
         for update skip locked)
      returning c.meeting_id, c.sequence, c.mode, c.organizer_user_id, c.organizer_email, c.meeting, c.series, c.attempts, c.trace_context`,
    [owner, leaseMs, limit],
  );
  return (result.rows as ChangeRow[]).map(toChange);
}

/** Extends the lease of a change still pending, when `owner` holds it and it has not run out: a relation of the change's key. */
const RENEWED_LEASE = `update meeting_changes set lease_until = clock_timestamp() + (? * interval '1 millisecond')
    where meeting_id = ? and sequence = ? and state = 'pending' and lease_owner = ? and lease_until > clock_timestamp()
   returning meeting_id, sequence`;

/**
 * Extends this worker's lease on a change it is still delivering; false when
 * the lease was lost (it ran out and another replica took the change), and
 * the worker must then send nothing more for it.
 */
export async function renewLease(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">, owner: string, leaseMs: number): Promise<boolean> {
  const result = await db.raw(RENEWED_LEASE, [leaseMs, change.meetingId, change.sequence, owner]);
  return result.rows.length > 0;
}

/**
 * How long a delivery marked as being sent may stay so before the send is
 * presumed lost and the delivery is sent again. The attempt that marked it
 * records what the provider answered, retrying until the database takes it,
 * so a mark this old means its worker died between marking and recording.
 * Far longer than any send (each SMTP step and Google request gives up after
 * INVITE_TIMEOUT_MS) and than a database restart.
 */
export const SENDING_PRESUMED_LOST_SECONDS = 15 * 60;

/**
 * Marks deliveries as being sent by `attempt`, and extends the change's
 * lease, in one committed statement before the provider is called: only
 * while `owner` holds the lease, and only rows still marked as the worker
 * read them (`sendingAttempt`: none, or a send presumed lost), so two
 * workers never mark the same row. `leased` false: the lease is lost and
 * nothing was marked.
 */
export async function beginSending(
  db: Knex,
  change: Pick<MeetingChange, "meetingId" | "sequence">,
  owner: string,
  leaseMs: number,
  rows: ReadonlyArray<Pick<PendingDelivery, "email" | "kind" | "sendingAttempt">>,
  attempt: string,
): Promise<{ leased: boolean; marked: number }> {
  const keys = rows.map((r) => ({ email: r.email, kind: r.kind, sending_attempt: r.sendingAttempt }));
  const result = await db.raw(
    `with lease as (${RENEWED_LEASE}),
     marked as (
       update deliveries d set sending_attempt = ?, sending_since = clock_timestamp()
         from lease l, jsonb_to_recordset(?::jsonb) as k(email text, kind text, sending_attempt text)
        where d.meeting_id = l.meeting_id and d.sequence = l.sequence and d.email = k.email and d.kind = k.kind
          and d.state = 'pending' and d.sending_attempt is not distinct from k.sending_attempt
       returning 1
     )
     select (select count(*) from lease)::int as leased, (select count(*) from marked)::int as marked`,
    [leaseMs, change.meetingId, change.sequence, owner, attempt, JSON.stringify(keys)],
  );
  const row = result.rows[0] as { leased: number; marked: number };
  return { leased: row.leased > 0, marked: row.marked };
}

/**
 * When the next pending change can be claimed (for the worker's sleep), or
 * undefined when none waits: not before its retry time, its current lease's
 * end or its predecessor's grace, and not while an earlier change of its
 * meeting is pending (that one's own time counts instead). So a worker never
 * spins on a change it cannot take yet.
 */
export async function nextDueAt(db: Knex): Promise<Date | undefined> {
  const result = await db.raw(
    `select min(greatest(c.next_attempt_at, c.lease_until,
                case when ${awaitsPredecessor("c")} then c.created_at + interval '${PREDECESSOR_GRACE_SECONDS} seconds' end)) as at
       from meeting_changes c
      where c.state = 'pending' and not ${followsPending("c")}`,
  );
  const at = (result.rows[0] as { at: Date | string | null } | undefined)?.at;
  return at ? new Date(at) : undefined;
}

/** A pending delivery as the worker reads it: with the attempt sending it, if one is. */
export interface PendingDelivery extends DeliveryRecord {
  /** The attempt that marked it as being sent and has not recorded the outcome yet. */
  sendingAttempt: string | null;
  /** Marked longer than SENDING_PRESUMED_LOST_SECONDS ago. */
  sendingPresumedLost: boolean;
}

export async function pendingDeliveries(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">): Promise<PendingDelivery[]> {
  const rows = (await db("deliveries")
    .where({ meeting_id: change.meetingId, sequence: change.sequence, state: "pending" })
    .select("*", db.raw(`coalesce(sending_since < clock_timestamp() - interval '${SENDING_PRESUMED_LOST_SECONDS} seconds', false) as sending_presumed_lost`))
    .orderBy("email")) as Array<DeliveryRow & { sending_attempt: string | null; sending_presumed_lost: boolean }>;
  return rows.map((row) => ({ ...toDelivery(row), sendingAttempt: row.sending_attempt, sendingPresumedLost: row.sending_presumed_lost }));
}

type DeliveryKey = Pick<DeliveryRecord, "meetingId" | "sequence" | "email" | "kind">;

/** What an attempt leaves a delivery with: settled, or pending for the next try. */
export interface DeliveryOutcome {
  state: "sent" | "failed" | "pending";
  channel: InviteChannel;
  attempts: number;
  error?: string;
  /** Why e-mail carries it rather than the organizer's calendar; unset keeps what was recorded. */
  fallbackReason?: string;
}

const outcomeColumns = (db: Knex, outcome: DeliveryOutcome) => ({
  state: outcome.state,
  channel: outcome.channel,
  attempts: outcome.attempts,
  last_error: outcome.error ?? null,
  ...(outcome.fallbackReason ? { fallback_reason: outcome.fallbackReason } : {}),
  sending_attempt: null,
  sending_since: null,
  updated_at: db.fn.now(),
});

/**
 * Moves the deliveries `where` selects to the outcome and, in the same
 * transaction, writes the event of each one it settled (sent or failed) to
 * the outbox: an outcome is published if and only if it is recorded, once.
 * Returns how many moved.
 */
async function settle(db: Knex, change: SettlingChange, where: (q: Knex.QueryBuilder) => void, outcome: DeliveryOutcome): Promise<number> {
  return db.transaction(async (trx) => {
    const query = trx("deliveries");
    where(query);
    const rows = (await query.update(outcomeColumns(trx, outcome)).returning("*")) as DeliveryRow[];
    for (const row of rows) {
      const event = inviteEventOf(change, toDelivery(row));
      if (event) await enqueueEvent(trx, event.def, event.payload, event.msgId);
    }
    return rows.length;
  });
}

/**
 * Records what the provider did with deliveries `attempt` marked as being
 * sent (null: deliveries no attempt marked); only a pending row so marked
 * moves, so a settled one is never overwritten. Its mark goes with it.
 */
export async function settleDeliveries(db: Knex, change: SettlingChange, keys: readonly DeliveryKey[], outcome: DeliveryOutcome, attempt: string | null = null): Promise<void> {
  if (keys.length === 0) return;
  await settle(
    db,
    change,
    (q) =>
      q
        .whereIn(
          ["meeting_id", "sequence", "email", "kind"],
          keys.map((k) => [k.meetingId, k.sequence, k.email, k.kind]),
        )
        .andWhere({ state: "pending" })
        .andWhereRaw("sending_attempt is not distinct from ?", [attempt]),
    outcome,
  );
}

/**
 * A delivery `attempt` handed to a provider that never said whether it took
 * it: it stays marked as being sent, under a mark no live attempt holds (so
 * `settleUnsent` leaves it), from the time it was first marked. Like a send
 * whose worker died, it is sent again only once presumed lost.
 */
export async function holdInDoubt(db: Knex, key: DeliveryKey, attempt: string, error: string): Promise<void> {
  await db("deliveries")
    .where({ meeting_id: key.meetingId, sequence: key.sequence, email: key.email, kind: key.kind, state: "pending", sending_attempt: attempt })
    .update({ sending_attempt: `in-doubt:${attempt}`, last_error: error, updated_at: db.fn.now() });
}

/**
 * The outcome of a failed attempt for the change's deliveries it did not
 * send: those no attempt is sending, and those it marked itself (which it
 * never handed to the provider, or the provider refused). Returns how many.
 */
export async function settleUnsent(db: Knex, change: SettlingChange, attempt: string, outcome: DeliveryOutcome): Promise<number> {
  return settle(
    db,
    change,
    (q) =>
      q
        .where({ meeting_id: change.meetingId, sequence: change.sequence, state: "pending" })
        .andWhere((w) => w.whereNull("sending_attempt").orWhere("sending_attempt", attempt)),
    outcome,
  );
}

/**
 * Gives the change back untouched while another attempt is sending some of
 * its deliveries: not counted as an attempt, due again when that send would
 * be presumed lost or after `recheckMs`, whichever comes first (its outcome
 * is then recorded, and the change is finished). Only by the lease's holder.
 */
export async function awaitSendInFlight(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">, owner: string, recheckMs: number): Promise<boolean> {
  const result = await db.raw(
    `update meeting_changes c
        set lease_until = null, attempts = c.attempts - 1,
            next_attempt_at = least(clock_timestamp() + (? * interval '1 millisecond'),
              (select min(d.sending_since) from deliveries d
                where d.meeting_id = c.meeting_id and d.sequence = c.sequence and d.state = 'pending') + interval '${SENDING_PRESUMED_LOST_SECONDS} seconds')
      where c.meeting_id = ? and c.sequence = ? and c.lease_owner = ?
      returning 1`,
    [recheckMs, change.meetingId, change.sequence, owner],
  );
  return result.rows.length > 0;
}

/**
 * The change is settled (every delivery sent or failed): the worker is done
 * with it. Only the lease's holder settles it; false when another worker
 * has taken the change over. Nothing reads a settled change's meeting or
 * trace context again, so they go; and once it is done, what it sent
 * replaces the meeting's earlier deliveries to the same participants
 * (replaceEarlierDeliveries).
 */
export async function finishChange(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">, owner: string, state: "done" | "failed", error?: string): Promise<boolean> {
  const sql = `with finished as (
       update meeting_changes set state = ?, lease_until = null, last_error = ?, meeting = null, series = null, trace_context = null
        where meeting_id = ? and sequence = ? and lease_owner = ?
       returning meeting_id, sequence, state
     ),
     newer as (select n.* from deliveries n join finished f using (meeting_id, sequence) where f.state = 'done'),
     replaced as (${replaceEarlierDeliveries("newer")})
     select count(*)::int as finished from finished`;
  const result = await db.raw(sql, [state, error ?? null, change.meetingId, change.sequence, owner]);
  return (result.rows[0] as { finished: number }).finished > 0;
}

/** Gives the change back to the queue, due again after `delayMs`; as finishChange, only by the lease's holder. */
export async function scheduleRetry(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence">, owner: string, delayMs: number, error: string): Promise<boolean> {
  const updated = await db("meeting_changes")
    .where({ meeting_id: change.meetingId, sequence: change.sequence, lease_owner: owner })
    .update({ lease_until: null, last_error: error, next_attempt_at: db.raw("clock_timestamp() + (? * interval '1 millisecond')", [delayMs]) });
  return updated > 0;
}

/** The channel that carried an earlier change of the meeting (or of its series), if any did: a meeting keeps its channel. */
export async function earlierChannel(db: Knex, change: Pick<MeetingChange, "meetingId" | "sequence" | "meeting">): Promise<InviteChannel | undefined> {
  const row = (await db("deliveries")
    .whereIn("meeting_id", [...new Set([change.meetingId, calendarMeetingId(change.meeting)])])
    .andWhere({ state: "sent" })
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

export interface ProviderEvent {
  meetingId: string;
  providerEventId: string;
  /** The organizer as the meeting's newest change names them. */
  organizerEmail: string;
}

/** The events of meetings kept in calendars of active connections of a provider, by connection. */
export async function providerEventsByConnection(db: Knex, provider: string): Promise<{ connectionId: string; events: ProviderEvent[] }[]> {
  const rows = (await db("provider_events as e")
    .join("calendar_connections as c", "c.id", "e.connection_id")
    .where({ "c.provider": provider, "c.status": "active" })
    .orderBy("e.connection_id")
    .select("e.connection_id", "e.meeting_id", "e.provider_event_id", db.raw("(select m.organizer_email from meeting_changes m where m.meeting_id = e.meeting_id order by m.sequence desc limit 1) as organizer_email"))) as {
    connection_id: string;
    meeting_id: string;
    provider_event_id: string;
    organizer_email: string;
  }[];
  const byConnection = new Map<string, ProviderEvent[]>();
  for (const r of rows) byConnection.set(r.connection_id, [...(byConnection.get(r.connection_id) ?? []), { meetingId: r.meeting_id, providerEventId: r.provider_event_id, organizerEmail: r.organizer_email }]);
  return [...byConnection].map(([connectionId, events]) => ({ connectionId, events }));
}

// ---- organizers -----------------------------------------------------------------------

/**
 * The organizer's address as the newest change of a meeting names it, a
 * series' changes and its occurrences' counted as one calendar object's;
 * undefined for a meeting whose changes never reached the invites service.
 */
export async function organizerOf(db: Knex, calendarMeetingId: string): Promise<string | undefined> {
  const row = (await db("meeting_changes")
    .whereRaw("coalesce(series_id, meeting_id) = ?", [calendarMeetingId])
    .orderBy("sequence", "desc")
    .first("organizer_email")) as { organizer_email: string } | undefined;
  return row?.organizer_email;
}

// ---- answer resets --------------------------------------------------------------------

/**
 * Keeps, per meeting, the highest sequence of a change that asked its
 * participants again. One statement however many; a redelivered event
 * writes the same again, and an older change never lowers it.
 */
export async function recordAnswerResets(db: Knex, resets: readonly { meetingId: string; sequence: number }[]): Promise<void> {
  if (resets.length === 0) return;
  await db.raw(
    `insert into answer_resets (meeting_id, sequence)
     select meeting_id, max(sequence) from jsonb_to_recordset(?::jsonb) as r(meeting_id text, sequence integer) group by meeting_id
     on conflict (meeting_id) do update set sequence = greatest(answer_resets.sequence, excluded.sequence)`,
    [JSON.stringify(resets.map((r) => ({ meeting_id: r.meetingId, sequence: r.sequence })))],
  );
}

/** The sequence of the last change that asked each meeting's participants again; a meeting never asked again is missing. */
export async function answerResetsOf(db: Knex, meetingIds: readonly string[]): Promise<Map<string, number>> {
  if (meetingIds.length === 0) return new Map();
  const rows = (await db("answer_resets").whereIn("meeting_id", [...new Set(meetingIds)]).select("meeting_id", "sequence")) as Array<{ meeting_id: string; sequence: number }>;
  return new Map(rows.map((r) => [r.meeting_id, r.sequence]));
}

// ---- occurrences answered apart -------------------------------------------------------

/** One attendee's own answer to one occurrence of a series, as 013_answered_apart keeps it. */
export interface AnsweredApart {
  seriesId: string;
  originalStart: Date;
  email: string;
}

/** Keeps that these attendees answered these occurrences on their own; one statement, a repeat writes nothing. */
export async function recordAnsweredApart(db: Knex, rows: readonly AnsweredApart[]): Promise<void> {
  if (rows.length === 0) return;
  await db("answered_apart")
    .insert(rows.map((r) => ({ series_id: r.seriesId, original_start: r.originalStart.toISOString(), email: r.email.toLowerCase() })))
    .onConflict(["series_id", "original_start", "email"])
    .ignore();
}

/**
 * The occurrences (as `<occurrence id>|<email>`) of these series answered on
 * their own. The read-back rounds ask it for the series they read, and it
 * first forgets the rows of those among them that were cancelled or removed:
 * the newest change that sent anything for the series (its own id, not an
 * occurrence's) cancelled it for everyone, so no answer to any of its
 * occurrences, moved ones included, is read again. (Rows are kept by
 * series, not by time: a moved occurrence keeps its original start, and
 * invites keeps no time of a settled change, so an old original start does
 * not say the occurrence is past.)
 */
export async function answeredApartOf(db: Knex, seriesIds: readonly string[]): Promise<Set<string>> {
  if (seriesIds.length === 0) return new Set();
  const ids = [...new Set(seriesIds)];
  await db.raw(
    `delete from answered_apart a
      where a.series_id = any(?::text[])
        and not exists (select 1 from deliveries d
                         where d.meeting_id = a.series_id and d.kind = 'request'
                           and d.sequence = (select max(n.sequence) from deliveries n where n.meeting_id = a.series_id))
        and exists (select 1 from deliveries n where n.meeting_id = a.series_id)`,
    [ids],
  );
  const rows = (await db("answered_apart").whereIn("series_id", ids).select("series_id", "original_start", "email")) as Array<{ series_id: string; original_start: Date; email: string }>;
  return new Set(rows.map((r) => `${occurrenceIdOf(r.series_id, new Date(r.original_start))}|${r.email}`));
}

// ---- answer watches (push channels) ---------------------------------------------------

/** A connection's push channel as stored: absent fields while none was opened yet. */
export interface AnswerWatch {
  connectionId: string;
  channelId: string | null;
  resourceId: string | null;
  expiresAt: Date | null;
}

interface WatchRow {
  connection_id: string;
  channel_id: string | null;
  resource_id: string | null;
  expires_at: Date | string | null;
}

const toWatch = (row: WatchRow): AnswerWatch => ({
  connectionId: row.connection_id,
  channelId: row.channel_id,
  resourceId: row.resource_id,
  expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
});

/**
 * Takes this replica's turn at the channels of the connections given (due
 * when never looked at, or `checkMs` ago), moving each on; one statement,
 * so of replicas checking together one takes each connection (as
 * claimPollTurns).
 */
export async function claimWatchChecks(db: Knex, provider: "google" | "microsoft", connectionIds: readonly string[], checkMs: number): Promise<AnswerWatch[]> {
  if (connectionIds.length === 0) return [];
  const result = await db.raw(
    `insert into answer_watches (connection_id, provider, next_check_at)
     select id, ?, clock_timestamp() + ?::int * interval '1 millisecond' from jsonb_array_elements_text(?::jsonb) as id
     on conflict (connection_id) do update set next_check_at = excluded.next_check_at
      where answer_watches.next_check_at <= clock_timestamp()
     returning connection_id, channel_id, resource_id, expires_at`,
    [provider, checkMs, JSON.stringify([...new Set(connectionIds)])],
  );
  return (result.rows as WatchRow[]).map(toWatch);
}

/** The channel the provider opened for the connection, its secret kept only as a hash. */
export async function saveWatch(db: Knex, connectionId: string, channel: { channelId: string; resourceId: string | null; secretHash: string; expiresAt: Date }): Promise<void> {
  await db("answer_watches")
    .where({ connection_id: connectionId })
    .update({ channel_id: channel.channelId, resource_id: channel.resourceId, secret_hash: channel.secretHash, expires_at: channel.expiresAt });
}

/** A renewed channel's new lapse. */
export async function extendWatch(db: Knex, connectionId: string, expiresAt: Date): Promise<void> {
  await db("answer_watches").where({ connection_id: connectionId }).update({ expires_at: expiresAt });
}

/** Whose channel a notification names, with the hash its secret must match; undefined for a channel unknown or lapsed. */
export async function watchOfChannel(db: Knex, provider: "google" | "microsoft", channelId: string): Promise<{ connectionId: string; secretHash: string } | undefined> {
  const row = (await db("answer_watches")
    .where({ provider, channel_id: channelId })
    .andWhere("expires_at", ">", db.fn.now())
    .first("connection_id", "secret_hash")) as { connection_id: string; secret_hash: string | null } | undefined;
  return row?.secret_hash ? { connectionId: row.connection_id, secretHash: row.secret_hash } : undefined;
}

/** Of the connections given, those whose channel is live: their answers arrive by push, and polling slows down. */
export async function watchedConnections(db: Knex, connectionIds: readonly string[]): Promise<Set<string>> {
  if (connectionIds.length === 0) return new Set();
  const rows = (await db("answer_watches").whereIn("connection_id", connectionIds).andWhere("expires_at", ">", db.fn.now()).select("connection_id")) as Array<{ connection_id: string }>;
  return new Set(rows.map((r) => r.connection_id));
}

/** Forgets the connection's channel, giving back what the provider needs to stop it. */
export async function takeWatch(db: Knex, connectionId: string): Promise<AnswerWatch | undefined> {
  const rows = (await db("answer_watches").where({ connection_id: connectionId }).delete().returning(["connection_id", "channel_id", "resource_id", "expires_at"])) as WatchRow[];
  return rows[0] ? toWatch(rows[0]) : undefined;
}

/** Channels of connections removed or replaced (a new consent makes a new id): nothing is read for them, and the provider lets them lapse. */
export async function forgetOrphanWatches(db: Knex): Promise<void> {
  await db.raw("delete from answer_watches w where not exists (select 1 from calendar_connections c where c.id = w.connection_id and c.status = 'active')");
}

/** A notification said the connection's calendar changed: its answers are due now, to whichever replica's round takes them first. */
export async function answersDueNow(db: Knex, connectionId: string): Promise<void> {
  await db.raw(
    `insert into answer_poll_turns (connection_id, next_poll_at) values (?, clock_timestamp())
     on conflict (connection_id) do update set next_poll_at = least(answer_poll_turns.next_poll_at, excluded.next_poll_at)`,
    [connectionId],
  );
}

// ---- poll turns -----------------------------------------------------------------------

/**
 * Takes this replica's turn at the connections that are due (never polled,
 * or last polled an interval ago), moving each on by `everyMs`; returns
 * those taken. One statement: of replicas claiming together, the row lock
 * of the upsert lets one move a connection on, and the others then find it
 * not due, so each connection is taken by one replica a round.
 */
export async function claimPollTurns(db: Knex, connectionIds: readonly string[], everyMs: number): Promise<Set<string>> {
  if (connectionIds.length === 0) return new Set();
  const result = await db.raw(
    `insert into answer_poll_turns (connection_id, next_poll_at)
     select id, clock_timestamp() + ?::int * interval '1 millisecond' from jsonb_array_elements_text(?::jsonb) as id
     on conflict (connection_id) do update set next_poll_at = excluded.next_poll_at
      where answer_poll_turns.next_poll_at <= clock_timestamp()
     returning connection_id`,
    [everyMs, JSON.stringify([...new Set(connectionIds)])],
  );
  return new Set((result.rows as Array<{ connection_id: string }>).map((r) => r.connection_id));
}
