import type { Knex } from "@sched/db";
import type { EventType, Meeting, Mode, PublicEvent } from "@sched/proto";

/** How far back the events list reaches (api-decisions part 12). */
const EVENTS_KEPT_DAYS = 30;

const json = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);
const date = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));

// ---- events --------------------------------------------------------------------------

/** A public event to record, with what it is about. */
export interface EventToRecord {
  sourceEventId: string;
  userId: string;
  meetingId: string;
  event: PublicEvent;
}

/** The meeting as this service's newest meeting event of it showed it (an invite event's object is an invite), to tell an update's earlier values. */
export async function lastMeetingState(db: Knex, meetingId: string): Promise<Meeting | undefined> {
  const row = await db("events")
    .where({ meeting_id: meetingId })
    .andWhere("type", "like", "meeting.%")
    .orderBy("seq", "desc")
    .first<{ body: PublicEvent | string } | undefined>("body");
  return row ? (json<PublicEvent>(row.body).data.object as Meeting) : undefined;
}

/**
 * Records an event and, in the same transaction, one delivery for every
 * enabled endpoint of its user and mode subscribed to its type. A meeting
 * event seen before (a redelivery) records nothing again: false.
 */
export async function recordEvent(db: Knex, record: EventToRecord, newDeliveryId: () => string): Promise<boolean> {
  const { event } = record;
  const inserted = await db.raw<{ rows: { seq: number }[] }>(
    `insert into events (id, source_event_id, user_id, mode, type, meeting_id, body, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (source_event_id) do nothing returning seq`,
    [event.id, record.sourceEventId, record.userId, event.mode, event.type, record.meetingId, JSON.stringify(event), event.createdAt],
  );
  const seq = inserted.rows[0]?.seq;
  if (seq === undefined) return false;
  const endpoints = await db("endpoints")
    .where({ user_id: record.userId, mode: event.mode, enabled: true })
    .whereRaw("(events \\? '*' or events \\? ?)", [event.type])
    .select<{ id: string }[]>("id");
  if (endpoints.length > 0) {
    await db("deliveries").insert(endpoints.map((e) => ({ id: newDeliveryId(), endpoint_id: e.id, event_seq: seq, meeting_id: record.meetingId, state: "pending" })));
  }
  return true;
}

/**
 * Forgets events past the kept days, with their deliveries and attempts (long
 * settled: deliveries are retried for days, not weeks). A batch at a time,
 * so the statement stays short however much has piled up.
 */
export async function purgeOldEvents(db: Knex, batch = 1_000): Promise<number> {
  return db("events")
    .whereIn("seq", db("events").select("seq").whereRaw(`created_at < now() - interval '${EVENTS_KEPT_DAYS} days'`).orderBy("seq").limit(batch))
    .delete();
}

export interface EventPage {
  events: PublicEvent[];
  hasMore: boolean;
}

/** One event of a user's mode within the kept days, by id. */
export async function findEvent(db: Knex, userId: string, mode: Mode, id: string): Promise<{ seq: number; event: PublicEvent } | undefined> {
  const row = await db("events")
    .where({ id, user_id: userId, mode })
    .whereRaw(`created_at > now() - interval '${EVENTS_KEPT_DAYS} days'`)
    .first<{ seq: number; body: PublicEvent | string } | undefined>("seq", "body");
  return row ? { seq: row.seq, event: json<PublicEvent>(row.body) } : undefined;
}

/** A page of a user's events, newest first, after the event at `afterSeq` when given. */
export async function listEvents(db: Knex, q: { userId: string; mode: Mode; type?: EventType; afterSeq?: number; limit: number }): Promise<EventPage> {
  const query = db("events")
    .where({ user_id: q.userId, mode: q.mode })
    .whereRaw(`created_at > now() - interval '${EVENTS_KEPT_DAYS} days'`)
    .orderBy("seq", "desc")
    .limit(q.limit + 1);
  if (q.type) query.where({ type: q.type });
  if (q.afterSeq !== undefined) query.where("seq", "<", q.afterSeq);
  const rows = await query.select<{ body: PublicEvent | string }[]>("body");
  return { events: rows.slice(0, q.limit).map((r) => json<PublicEvent>(r.body)), hasMore: rows.length > q.limit };
}

// ---- endpoints --------------------------------------------------------------------------

export interface EndpointRecord {
  id: string;
  userId: string;
  mode: Mode;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  sealedSecret: string;
  sealedPreviousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
}

interface EndpointRow {
  id: string;
  user_id: string;
  mode: Mode;
  url: string;
  events: string[] | string;
  description: string;
  enabled: boolean;
  sealed_secret: string;
  sealed_previous_secret: string | null;
  previous_secret_expires_at: Date | string | null;
  created_at: Date | string;
}

const toEndpoint = (row: EndpointRow): EndpointRecord => ({
  id: row.id,
  userId: row.user_id,
  mode: row.mode,
  url: row.url,
  events: json<string[]>(row.events),
  description: row.description,
  enabled: row.enabled,
  sealedSecret: row.sealed_secret,
  sealedPreviousSecret: row.sealed_previous_secret,
  previousSecretExpiresAt: row.previous_secret_expires_at === null ? null : date(row.previous_secret_expires_at),
  createdAt: date(row.created_at),
});

export async function insertEndpoint(db: Knex, e: { id: string; userId: string; mode: Mode; url: string; events: string[]; description: string; sealedSecret: string }): Promise<EndpointRecord> {
  const [row] = await db("endpoints")
    .insert({ id: e.id, user_id: e.userId, mode: e.mode, url: e.url, events: JSON.stringify(e.events), description: e.description, enabled: true, sealed_secret: e.sealedSecret })
    .returning<EndpointRow[]>("*");
  return toEndpoint(row!);
}

/** The endpoints of a user's mode, newest first. */
export async function listEndpoints(db: Knex, userId: string, mode: Mode): Promise<EndpointRecord[]> {
  const rows = await db("endpoints").where({ user_id: userId, mode }).orderBy([{ column: "created_at", order: "desc" }, { column: "id", order: "desc" }]).select<EndpointRow[]>("*");
  return rows.map(toEndpoint);
}

export async function countEndpoints(db: Knex, userId: string, mode: Mode): Promise<number> {
  const row = await db("endpoints").where({ user_id: userId, mode }).count<{ count: number | string }>({ count: "*" }).first();
  return Number(row?.count ?? 0);
}

/** One endpoint of a user's mode; another user's or mode's is not found. */
export async function findEndpoint(db: Knex, userId: string, mode: Mode, id: string): Promise<EndpointRecord | undefined> {
  const row = await db("endpoints").where({ id, user_id: userId, mode }).first<EndpointRow | undefined>("*");
  return row ? toEndpoint(row) : undefined;
}

/** Endpoints by id, whoever owns them: for the worker. */
export async function endpointsByIds(db: Knex, ids: readonly string[]): Promise<Map<string, EndpointRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await db("endpoints").whereIn("id", [...ids]).select<EndpointRow[]>("*");
  return new Map(rows.map((r) => [r.id, toEndpoint(r)]));
}

export async function updateEndpoint(
  db: Knex,
  userId: string,
  mode: Mode,
  id: string,
  change: { url?: string; events?: string[]; description?: string; enabled?: boolean },
): Promise<EndpointRecord | undefined> {
  const set: Record<string, unknown> = {};
  if (change.url !== undefined) set.url = change.url;
  if (change.events !== undefined) set.events = JSON.stringify(change.events);
  if (change.description !== undefined) set.description = change.description;
  if (change.enabled !== undefined) set.enabled = change.enabled;
  if (Object.keys(set).length === 0) return findEndpoint(db, userId, mode, id);
  const [row] = await db("endpoints").where({ id, user_id: userId, mode }).update(set).returning<EndpointRow[]>("*");
  return row ? toEndpoint(row) : undefined;
}

export async function deleteEndpoint(db: Knex, userId: string, mode: Mode, id: string): Promise<boolean> {
  return (await db("endpoints").where({ id, user_id: userId, mode }).delete()) > 0;
}

/** Replaces the secret, keeping the current one beside it until `previousExpiresAt`. */
export async function rollSecret(db: Knex, id: string, sealedSecret: string, sealedPrevious: string, previousExpiresAt: Date): Promise<void> {
  await db("endpoints").where({ id }).update({ sealed_secret: sealedSecret, sealed_previous_secret: sealedPrevious, previous_secret_expires_at: previousExpiresAt });
}

// ---- deliveries --------------------------------------------------------------------------

/** A delivery the worker has claimed, with the event it carries. */
export interface ClaimedDelivery {
  seq: number;
  id: string;
  endpointId: string;
  attempts: number;
  createdAt: Date;
  event: PublicEvent;
}

/**
 * Leases up to `limit` deliveries that are due, to this worker, until
 * `leaseMs` from now. A delivery is due only when no earlier event of its
 * meeting still waits for the same endpoint (so a meeting's events arrive in
 * order), and at most `perEndpoint` of one endpoint are taken at once, none
 * of an endpoint in `busy`: a receiver that never answers holds up only its
 * own deliveries. Leased rows are skipped by other replicas until the lease
 * runs out (a crashed worker's deliveries are taken again then).
 */
export async function claimDue(db: Knex, q: { limit: number; perEndpoint: number; busy: readonly string[]; leaseMs: number }): Promise<ClaimedDelivery[]> {
  const { rows } = await db.raw<{ rows: { seq: number; id: string; endpoint_id: string; attempts: number; created_at: Date | string; body: PublicEvent | string }[] }>(
    `with due as (
       select d.seq, row_number() over (partition by d.endpoint_id order by d.event_seq, d.seq) as place
       from deliveries d
       join endpoints e on e.id = d.endpoint_id and e.enabled
       where d.state = 'pending' and d.next_attempt_at <= now()
         and (d.lease_until is null or d.lease_until < now())
         and not (d.endpoint_id = any(?::varchar[]))
         and not exists (
           select 1 from deliveries p
           where p.endpoint_id = d.endpoint_id and p.meeting_id = d.meeting_id and p.state = 'pending' and p.event_seq < d.event_seq)
       order by d.next_attempt_at
       limit 1000
     ), picked as (
       select seq from due where place <= ? limit ?
     )
     update deliveries d set lease_until = now() + (? * interval '1 millisecond')
     from picked, events ev
     where d.seq = picked.seq and ev.seq = d.event_seq
       and d.state = 'pending' and (d.lease_until is null or d.lease_until < now())
     returning d.seq, d.id, d.endpoint_id, d.attempts, d.created_at, ev.body`,
    [`{${busy(q.busy)}}`, q.perEndpoint, q.limit, q.leaseMs],
  );
  return rows.map((r) => ({ seq: r.seq, id: r.id, endpointId: r.endpoint_id, attempts: r.attempts, createdAt: date(r.created_at), event: json<PublicEvent>(r.body) }));
}

/** Endpoint ids as a Postgres array literal (they are `whe_` and base62, nothing to quote). */
const busy = (ids: readonly string[]) => ids.filter((id) => /^whe_[0-9A-Za-z]+$/.test(id)).join(",");

export interface AttemptOutcome {
  at: Date;
  status: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Writes an attempt and where it leaves the delivery: delivered, failed for
 * good, or due again at `nextAttemptAt`. Delivered moves the endpoint's last
 * success; `disable` turns the endpoint off, in the same transaction.
 */
export async function settleAttempt(
  db: Knex,
  d: { seq: number; endpointId: string; attempt: number },
  outcome: AttemptOutcome,
  next: { state: "delivered" } | { state: "failed"; disable: boolean } | { state: "pending"; nextAttemptAt: Date },
): Promise<void> {
  await db.transaction(async (trx) => {
    await trx("delivery_attempts")
      .insert({ delivery_seq: d.seq, attempt: d.attempt, at: outcome.at, status: outcome.status, error: outcome.error, duration_ms: outcome.durationMs })
      .onConflict(["delivery_seq", "attempt"])
      .ignore();
    await trx("deliveries")
      .where({ seq: d.seq })
      .update({ state: next.state, attempts: d.attempt, lease_until: null, ...(next.state === "pending" ? { next_attempt_at: next.nextAttemptAt } : {}) });
    if (next.state === "delivered") await trx("endpoints").where({ id: d.endpointId }).update({ last_success_at: outcome.at });
    if (next.state === "failed" && next.disable) await trx("endpoints").where({ id: d.endpointId }).update({ enabled: false });
  });
}

/** When the endpoint last took a delivery; null when never. */
export async function lastSuccessAt(db: Knex, endpointId: string): Promise<Date | null> {
  const row = await db("endpoints").where({ id: endpointId }).first<{ last_success_at: Date | string | null } | undefined>("last_success_at");
  return row?.last_success_at ? date(row.last_success_at) : null;
}

/** Queues the event again for every enabled endpoint of its user and mode subscribed to its type; the new deliveries' ids. */
export async function queueResend(db: Knex, q: { eventSeq: number; userId: string; mode: Mode; type: EventType; meetingId: string }, newDeliveryId: () => string): Promise<string[]> {
  const endpoints = await db("endpoints")
    .where({ user_id: q.userId, mode: q.mode, enabled: true })
    .whereRaw("(events \\? '*' or events \\? ?)", [q.type])
    .select<{ id: string }[]>("id");
  if (endpoints.length === 0) return [];
  const rows = endpoints.map((e) => ({ id: newDeliveryId(), endpoint_id: e.id, event_seq: q.eventSeq, meeting_id: q.meetingId, state: "pending" }));
  await db("deliveries").insert(rows);
  return rows.map((r) => r.id);
}

export interface DeliveryView {
  seq: number;
  id: string;
  eventId: string;
  eventType: EventType;
  state: "pending" | "delivered" | "failed";
  nextAttemptAt: Date | null;
  createdAt: Date;
  attempts: AttemptOutcome[];
}

/** Deliveries with their attempts, newest first: of one endpoint (paged) or by id. */
export async function listDeliveries(db: Knex, q: { endpointId: string; afterSeq?: number; limit: number } | { ids: readonly string[] }): Promise<DeliveryView[]> {
  const query = db("deliveries as d").join("events as ev", "ev.seq", "d.event_seq").orderBy("d.seq", "desc");
  if ("ids" in q) query.whereIn("d.id", [...q.ids]);
  else {
    query.where("d.endpoint_id", q.endpointId).limit(q.limit);
    if (q.afterSeq !== undefined) query.where("d.seq", "<", q.afterSeq);
  }
  const rows = await query.select<{ seq: number; id: string; event_id: string; type: EventType; state: DeliveryView["state"]; next_attempt_at: Date | string; created_at: Date | string }[]>(
    "d.seq",
    "d.id",
    "ev.id as event_id",
    "ev.type",
    "d.state",
    "d.next_attempt_at",
    "d.created_at",
  );
  const attempts = rows.length === 0 ? [] : await db("delivery_attempts").whereIn("delivery_seq", rows.map((r) => r.seq)).orderBy(["delivery_seq", "attempt"]).select<{ delivery_seq: number; at: Date | string; status: number | null; error: string | null; duration_ms: number }[]>("*");
  return rows.map((r) => ({
    seq: r.seq,
    id: r.id,
    eventId: r.event_id,
    eventType: r.type,
    state: r.state,
    nextAttemptAt: r.state === "pending" ? date(r.next_attempt_at) : null,
    createdAt: date(r.created_at),
    attempts: attempts.filter((a) => a.delivery_seq === r.seq).map((a) => ({ at: date(a.at), status: a.status, error: a.error, durationMs: a.duration_ms })),
  }));
}

/** The list position of one of an endpoint's deliveries, for `startingAfter`. */
export async function deliverySeq(db: Knex, endpointId: string, id: string): Promise<number | undefined> {
  const row = await db("deliveries").where({ id, endpoint_id: endpointId }).first<{ seq: number } | undefined>("seq");
  return row?.seq;
}
