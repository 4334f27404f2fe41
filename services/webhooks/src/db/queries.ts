import { holdConnection, isEmbedded, namedStatement, runNamed, type HeldConnection, type Knex } from "@sched/db";
import type { EventType, Meeting, Mode, PublicEvent } from "@sched/proto";

/** How far back the events list reaches (api-decisions part 12). */
const EVENTS_KEPT_DAYS = 30;

/** The channel on which recorded deliveries are announced, so every replica's worker looks at once. */
const QUEUED_CHANNEL = "webhooks_deliveries_queued";

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

/**
 * Each meeting as this service's newest meeting event of it showed it (an
 * invite event's object is an invite), to tell an update's earlier values and
 * an invite's answer; a meeting with no event here is missing. One statement
 * for a batch's meetings.
 */
export async function lastMeetingStates(db: Knex, meetingIds: readonly string[]): Promise<Map<string, Meeting>> {
  const states = new Map<string, Meeting>();
  if (meetingIds.length === 0) return states;
  const { rows } = await db.raw<{ rows: { meeting_id: string; body: PublicEvent | string }[] }>(
    `select distinct on (meeting_id) meeting_id, body from events
     where meeting_id = any(?) and type like 'meeting.%'
     order by meeting_id, seq desc`,
    [[...new Set(meetingIds)]],
  );
  for (const row of rows) states.set(row.meeting_id, json<PublicEvent>(row.body).data.object as Meeting);
  return states;
}

const RECORDED_THROUGH = namedStatement("webhooks_recorded_through", "select recorded_through from consumer_positions where consumer = ?");

/**
 * The stream sequence through which `consumer` has recorded its stream (0
 * before its first batch, its row then made). Read without a lock: a batch
 * recorded after it moves it on only if it is still this (see RecordingPosition).
 */
export async function recordedThrough(db: Knex, consumer: string): Promise<number> {
  let [row] = await runNamed<{ recorded_through: string }>(db, RECORDED_THROUGH, [consumer]);
  if (!row) {
    await db.raw("insert into consumer_positions (consumer, recorded_through) values (?, 0) on conflict (consumer) do nothing", [consumer]);
    [row] = await runNamed<{ recorded_through: string }>(db, RECORDED_THROUGH, [consumer]);
  }
  return Number(row!.recorded_through);
}

/** A consumer's position as a batch's recording moves it: from where it was read to the batch's last sequence. */
export interface RecordingPosition {
  consumer: string;
  from: number;
  to: number;
}

/** An enabled endpoint and the event types it takes. */
export interface SubscribedEndpoint {
  id: string;
  events: string[];
}

const ENABLED_ENDPOINTS = namedStatement(
  "webhooks_enabled_endpoints",
  "select id, user_id, mode, events from endpoints where user_id in (select json_array_elements_text(?::json)) and enabled",
);

/** The enabled endpoints of users' modes (key: user id, a space, mode): those their events may be owed to. One statement for a batch's users. */
export async function enabledEndpoints(db: Knex, owners: readonly { userId: string; mode: Mode }[]): Promise<Map<string, SubscribedEndpoint[]>> {
  const byOwner = new Map<string, SubscribedEndpoint[]>(owners.map((o) => [ownerKey(o.userId, o.mode), []]));
  if (owners.length === 0) return byOwner;
  const rows = await runNamed<{ id: string; user_id: string; mode: Mode; events: string[] | string }>(db, ENABLED_ENDPOINTS, [JSON.stringify([...new Set(owners.map((o) => o.userId))])]);
  for (const r of rows) byOwner.get(ownerKey(r.user_id, r.mode))?.push({ id: r.id, events: json<string[]>(r.events) });
  return byOwner;
}

/** The key of a user's mode among a batch's owners of events. */
export const ownerKey = (userId: string, mode: Mode): string => `${userId} ${mode}`;

/** An event to record with the deliveries it owes, one a subscribed endpoint. */
export interface EventWithDeliveries extends EventToRecord {
  deliveries: readonly { id: string; endpointId: string }[];
}

/** What a worker may claim of a batch's deliveries as they are recorded: up to `free` of each endpoint, leased for `leaseMs`. */
export interface RecordingRoom {
  free: ReadonlyMap<string, number>;
  leaseMs: number;
}

/** What recording a batch did: how many events were new, the deliveries it claimed, whether any were left for a claim; whether it moved the position it was given. */
export interface Recorded {
  added: number;
  claimed: ClaimedDelivery[];
  leftBehind: boolean;
  advanced: boolean;
}

const RECORD_EVENTS = namedStatement(
  "webhooks_record_events",
  `with batch as (
     select * from json_to_recordset(?::json) as b(ord int, id varchar, source_event_id varchar, user_id varchar, mode varchar, type varchar,
                                                   meeting_id varchar, created_at timestamptz, deliveries json, body json)
   ), room as (
     select endpoint_id, free from json_to_recordset(?::json) as r(endpoint_id varchar, free int)
   ), advanced as (
     -- The consumer's position moves only from where the batch was read after: another replica that recorded meanwhile makes this record nothing.
     update consumer_positions set recorded_through = ? where consumer = ? and recorded_through = ?
     returning 1
   ), allowed as (
     select ?::varchar is null or exists (select 1 from advanced) as ok
   ), owed_to as (
     -- The batch's endpoints, locked against a delete until this commits: what the foreign key's check per delivery did, once an endpoint.
     -- One deleted meanwhile is not returned, so nothing is queued for it.
     select e.id, e.url, e.sealed_secret, e.sealed_previous_secret, e.previous_secret_expires_at from endpoints e
     where e.id in (select o.endpoint_id from batch, json_to_recordset(batch.deliveries) as o(id varchar, endpoint_id varchar))
     for key share
   ), recorded as (
     insert into events (id, source_event_id, user_id, mode, type, meeting_id, body, created_at)
     select id, source_event_id, user_id, mode, type, meeting_id, body, created_at from batch where (select ok from allowed) order by ord
     on conflict (source_event_id) do nothing
     returning seq, id, source_event_id
   ), queued as (
     insert into deliveries (id, endpoint_id, event_seq, meeting_id, state)
     select owed.id, owed.endpoint_id, recorded.seq, batch.meeting_id, 'pending'
     from recorded join batch using (source_event_id), json_to_recordset(batch.deliveries) as owed(id varchar, endpoint_id varchar)
     where owed.endpoint_id in (select id from owed_to)
     order by recorded.seq
     returning seq, id, endpoint_id, meeting_id, event_seq, next_attempt_at, created_at
   ), first_owed as (
     -- Its meeting's first owed event for the endpoint: first in the batch, and nothing owed from before (a probe of the pending key).
     select q.seq, q.endpoint_id, row_number() over (partition by q.endpoint_id order by q.seq) as nth
     from (select q.*, rank() over (partition by q.endpoint_id, q.meeting_id order by q.event_seq) as in_meeting from queued q) q
     where q.in_meeting = 1
       and not exists (select 1 from pending_deliveries p where p.endpoint_id = q.endpoint_id and p.meeting_id = q.meeting_id)
   ), taken as (
     select f.seq from first_owed f join room using (endpoint_id) where f.nth <= room.free
   ), owed as (
     insert into pending_deliveries (endpoint_id, meeting_id, event_seq, delivery_seq, next_attempt_at, lease_until)
     select q.endpoint_id, q.meeting_id, q.event_seq, q.seq, q.next_attempt_at,
            case when q.seq in (select seq from taken) then now() + (? * interval '1 millisecond') end
     from queued q
   ), left_behind as (
     select exists (select 1 from queued where seq not in (select seq from taken)) as unclaimed
   )
   -- Other replicas' workers are woken (see listenForQueued), once the statement commits, for what no claim here took.
   -- A claimed delivery's body is not read back: its event's place in the batch tells which text was sent.
   select (select count(*)::int from recorded) as added, (select unclaimed from left_behind) as left_behind, (select ok from allowed) as advanced,
          (select count(*) from (select pg_notify('${QUEUED_CHANNEL}', '') from left_behind where unclaimed) n) as announced,
          q.seq, q.id, 0 as attempts, q.created_at, q.meeting_id, q.event_seq, ev.id as event_id, b.ord,
          e.id as endpoint_id, e.url, e.sealed_secret, e.sealed_previous_secret, e.previous_secret_expires_at
   from (select 1) one
   left join (queued q join taken using (seq) join recorded ev on ev.seq = q.event_seq join batch b using (source_event_id) join owed_to e on e.id = q.endpoint_id) on true`,
);

/**
 * Records a batch of events and their deliveries in one statement, in the
 * batch's order (so `seq` follows it); each delivery is owed (a row of
 * `pending_deliveries`) until it settles. An event whose source was seen
 * before (a redelivery) records nothing again; the source ids must be
 * distinct within the batch. Sent by name (runNamed): knex would build it
 * anew, and Postgres plan it anew, for every batch.
 *
 * Given `position`, the same statement moves the consumer's position to the
 * batch's last sequence, and records the batch only if the position was
 * still where the batch was read after (`advanced`): so the replicas record
 * a stream one at a time, in its order, each batch in one statement without
 * a transaction around it.
 *
 * Given `room`, the same statement claims what it may of the new deliveries
 * (their pending rows are inserted leased, so no claim has to write them
 * again): those that are their meeting's first owed event for the endpoint
 * (none earlier owed, none earlier in the batch), up to the endpoint's room,
 * in recording order. Other replicas are woken (NOTIFY) only for deliveries
 * left unclaimed.
 */
export async function recordEvents(
  db: Knex,
  records: readonly EventWithDeliveries[],
  room: RecordingRoom = { free: new Map(), leaseMs: 0 },
  position?: RecordingPosition,
): Promise<Recorded> {
  if (records.length === 0 && !position) return { added: 0, claimed: [], leftBehind: false, advanced: true };
  // Each body is encoded once: stored as this text (json keeps it as written, field order included), written into the batch
  // as it is (not escaped into a string), and sent as these bytes to every endpoint.
  const bodies = records.map((r) => JSON.stringify(r.event));
  const batch = records.map((r, ord) => {
    const row = {
      ord,
      id: r.event.id,
      source_event_id: r.sourceEventId,
      user_id: r.userId,
      mode: r.event.mode,
      type: r.event.type,
      meeting_id: r.meetingId,
      created_at: r.event.createdAt,
      deliveries: r.deliveries.map((d) => ({ id: d.id, endpoint_id: d.endpointId })),
    };
    return `${JSON.stringify(row).slice(0, -1)},"body":${bodies[ord]!}}`;
  });
  const free = [...room.free].map(([endpointId, n]) => ({ endpoint_id: endpointId, free: n }));
  const rows = await runNamed<RecordedRow & Partial<ClaimedRow> & { ord?: number }>(db, RECORD_EVENTS, [
    `[${batch.join(",")}]`,
    JSON.stringify(free),
    position?.to ?? null,
    position?.consumer ?? null,
    position?.from ?? null,
    position?.consumer ?? null,
    room.leaseMs,
  ]);
  const first = rows[0];
  const bytes = new Map<number, Buffer>();
  const bodyOf = (ord: number) => bytes.get(ord) ?? bytes.set(ord, Buffer.from(bodies[ord]!)).get(ord)!;
  return {
    added: first?.added ?? 0,
    leftBehind: first?.left_behind ?? false,
    advanced: first?.advanced ?? false,
    claimed: rows.filter((r): r is RecordedRow & ClaimedRow & { ord: number } => r.seq !== null && r.seq !== undefined).map((r) => toClaimed(r, bodyOf(r.ord))),
  };
}

interface RecordedRow {
  added: number;
  left_behind: boolean;
  advanced: boolean;
}

/**
 * Calls `onQueued` whenever any replica records deliveries (`recordEvents`
 * announces them with `pg_notify`), from a connection held out of the pool
 * with `LISTEN`, until the returned stop is called. A lost connection is
 * replaced after `retryMs`; meanwhile the worker's poll covers. Only a
 * Postgres server has other replicas to hear: on an embedded database it
 * does nothing.
 */
export function listenForQueued(db: Knex, onQueued: () => void, onLost: (err: unknown) => void, retryMs: number): () => Promise<void> {
  if (isEmbedded(db)) return () => Promise.resolve();
  let stopped = false;
  let held: HeldConnection | undefined;
  let retry: NodeJS.Timeout | undefined;
  const notified = (message: { channel: string }) => {
    if (message.channel === QUEUED_CHANNEL) onQueued();
  };
  const failed = () => again(new Error("the connection listening for queued webhook deliveries was lost"));
  const letGo = async ({ connection, release }: HeldConnection) => {
    connection.off("notification", notified);
    connection.off("error", failed);
    connection.off("end", failed);
    await release().catch(() => undefined);
  };
  const again = (err: unknown) => {
    if (stopped || retry) return;
    onLost(err);
    if (held) void letGo(held);
    held = undefined;
    retry = setTimeout(() => {
      retry = undefined;
      listening = listen();
    }, retryMs);
  };
  const listen = async () => {
    try {
      held = await holdConnection(db);
      const { connection } = held;
      connection.on("notification", notified);
      connection.on("error", failed);
      connection.on("end", failed);
      await connection.query(`listen ${QUEUED_CHANNEL}`);
    } catch (err) {
      again(err);
    }
  };
  let listening = listen();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await listening;
    const listener = held;
    held = undefined;
    if (!listener) return;
    await listener.connection.query(`unlisten ${QUEUED_CHANNEL}`).catch(() => undefined);
    await letGo(listener);
  };
}

/**
 * Forgets events past the kept days, with their deliveries and attempts (long
 * settled: deliveries are retried for days, not weeks). A batch at a time,
 * so the statement stays short however much has piled up.
 */
export async function purgeOldEvents(db: Knex, batch = 1_000): Promise<number> {
  const { rows } = await db.raw<{ rows: { purged: number }[] }>(
    `with purged as (
       delete from events where seq in (
         select seq from events where created_at < now() - interval '${EVENTS_KEPT_DAYS} days' order by seq limit ?)
       returning seq
     ), their_deliveries as (
       -- Their attempts go with them (the attempts' foreign key).
       delete from deliveries d using purged where d.event_seq = purged.seq
     )
     select count(*)::int as purged from purged`,
    [batch],
  );
  await forgetOrphanedPending(db);
  return rows[0]?.purged ?? 0;
}

/**
 * Deletes pending rows whose delivery or endpoint is gone (purged with its
 * event, or the endpoint's row deleted past deleteEndpoint): nothing would
 * send them, and a claim would step over them. `pending_deliveries` holds
 * only owed work, so this reads little.
 */
async function forgetOrphanedPending(db: Knex): Promise<void> {
  await db.raw(
    `delete from pending_deliveries p
     where not exists (select 1 from deliveries d where d.seq = p.delivery_seq) or not exists (select 1 from endpoints e where e.id = p.endpoint_id)`,
  );
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

/** Deletes an endpoint, its deliveries (their attempts by their foreign key) and what it was still owed. */
export async function deleteEndpoint(db: Knex, userId: string, mode: Mode, id: string): Promise<boolean> {
  const { rows } = await db.raw<{ rows: { deleted: number }[] }>(
    `with gone as (
       delete from endpoints where id = ? and user_id = ? and mode = ? returning id
     ), its_deliveries as (
       delete from deliveries d using gone where d.endpoint_id = gone.id
     ), owed as (
       delete from pending_deliveries p using gone where p.endpoint_id = gone.id
     )
     select count(*)::int as deleted from gone`,
    [id, userId, mode],
  );
  return (rows[0]?.deleted ?? 0) > 0;
}

/** Replaces the secret, keeping the current one beside it until `previousExpiresAt`. */
export async function rollSecret(db: Knex, id: string, sealedSecret: string, sealedPrevious: string, previousExpiresAt: Date): Promise<void> {
  await db("endpoints").where({ id }).update({ sealed_secret: sealedSecret, sealed_previous_secret: sealedPrevious, previous_secret_expires_at: previousExpiresAt });
}

// ---- deliveries --------------------------------------------------------------------------

/** What signing a delivery takes of its endpoint. */
export interface SigningKeys {
  id: string;
  sealedSecret: string;
  sealedPreviousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/** Where a delivery is owed: its row of `pending_deliveries`, by key. */
export interface OwedKey {
  seq: number;
  endpointId: string;
  meetingId: string;
  eventSeq: number;
}

/** A delivery the worker has claimed, with the event it carries (as stored: the body sent, its bytes shared by the event's deliveries) and its endpoint. */
export interface ClaimedDelivery extends OwedKey {
  id: string;
  attempts: number;
  createdAt: Date;
  eventId: string;
  body: Buffer;
  endpoint: SigningKeys & { url: string };
}

const CLAIM_DUE = namedStatement(
  "webhooks_claim_due",
  `with recursive room as (
       select endpoint_id, free from json_to_recordset(?::json) as r(endpoint_id varchar, free int)
     ), walk(endpoint_id) as (
       -- The endpoints with owed deliveries, each found by one probe of the key (a skip scan).
       (select endpoint_id from pending_deliveries order by endpoint_id limit 1)
       union all
       select (select p.endpoint_id from pending_deliveries p where p.endpoint_id > w.endpoint_id order by p.endpoint_id limit 1)
       from walk w where w.endpoint_id is not null
     ), open as (
       select e.id, coalesce(room.free, ?) as free
       from walk join endpoints e on e.id = walk.endpoint_id and e.enabled
       left join room on room.endpoint_id = e.id
       where coalesce(room.free, ?) > 0
     ), picked as (
       select c.* from open cross join lateral (
         select p.endpoint_id, p.meeting_id, p.event_seq, p.delivery_seq, p.next_attempt_at
         from pending_deliveries p
         where p.endpoint_id = open.id and p.next_attempt_at <= now() and (p.lease_until is null or p.lease_until <= now())
           -- The first owed event of its meeting for the endpoint: a subplan per candidate, one probe of the key.
           and p.event_seq = (
             select f.event_seq from pending_deliveries f
             where f.endpoint_id = p.endpoint_id and f.meeting_id = p.meeting_id
             order by f.event_seq limit 1)
         order by p.next_attempt_at
         limit open.free
       ) c
       order by c.next_attempt_at, c.delivery_seq
       limit ?
     ), locked as (
       select p.endpoint_id, p.meeting_id, p.event_seq, p.delivery_seq
       from picked join pending_deliveries p using (endpoint_id, meeting_id, event_seq, delivery_seq)
       where p.next_attempt_at <= now() and (p.lease_until is null or p.lease_until <= now())
       for update of p skip locked
     ), leased as (
       update pending_deliveries p set lease_until = now() + (? * interval '1 millisecond')
       from locked l
       where (p.endpoint_id, p.meeting_id, p.event_seq, p.delivery_seq) = (l.endpoint_id, l.meeting_id, l.event_seq, l.delivery_seq)
       returning p.endpoint_id, p.meeting_id, p.event_seq, p.delivery_seq
     )
     select d.seq, d.id, d.attempts, d.created_at, l.meeting_id, l.event_seq, ev.id as event_id, ev.body::text as body,
            e.id as endpoint_id, e.url, e.sealed_secret, e.sealed_previous_secret, e.previous_secret_expires_at
     from leased l
     join deliveries d on d.seq = l.delivery_seq
     join events ev on ev.seq = l.event_seq
     join endpoints e on e.id = l.endpoint_id`,
);

/**
 * Leases up to `limit` deliveries that are due, to this worker, until
 * `leaseMs` from now, in one statement. A delivery is due only when no
 * earlier event of its meeting still waits for the same endpoint (so a
 * meeting's events arrive in order); of one endpoint at most `perEndpoint`
 * less what this worker already `held` of it are taken: a receiver that
 * never answers holds up only its own deliveries. Rows another replica is
 * claiming at the same moment are skipped, not waited for. A leased delivery
 * is not taken again until its lease runs out (a crashed worker's deliveries
 * are taken again then).
 *
 * Only `pending_deliveries` is read to choose: the endpoints with owed
 * deliveries are walked one probe of its key each, and of each enabled one
 * with room its earliest due deliveries are read in due order from
 * `pending_deliveries_due`, stopping at its room; the earliest of all these
 * are taken. A claim then reads about what it takes, plus the leased
 * deliveries of the endpoints it looks at, however long the backlog. The
 * lease is a column of no index, so the pending row is updated in place.
 * Sent by name (runNamed): the worker claims many times a second.
 */
export async function claimDue(db: Knex, q: { limit: number; perEndpoint: number; held: ReadonlyMap<string, number>; leaseMs: number }): Promise<ClaimedDelivery[]> {
  const room = [...q.held].map(([endpointId, held]) => ({ endpoint_id: endpointId, free: q.perEndpoint - held }));
  const rows = await runNamed<ClaimedRow & { body: string }>(db, CLAIM_DUE, [JSON.stringify(room), q.perEndpoint, q.perEndpoint, q.limit, q.leaseMs]);
  // One event's deliveries to several endpoints share its bytes.
  const bytes = new Map<string, Buffer>();
  return rows.map((r) => toClaimed(r, bytes.get(String(r.event_seq)) ?? bytes.set(String(r.event_seq), Buffer.from(r.body)).get(String(r.event_seq))!));
}

interface ClaimedRow {
  seq: number | string;
  id: string;
  attempts: number;
  created_at: Date | string;
  meeting_id: string;
  event_seq: number | string;
  event_id: string;
  endpoint_id: string;
  url: string;
  sealed_secret: string;
  sealed_previous_secret: string | null;
  previous_secret_expires_at: Date | string | null;
}

function toClaimed(r: ClaimedRow, body: Buffer): ClaimedDelivery {
  return {
    seq: Number(r.seq),
    endpointId: r.endpoint_id,
    meetingId: r.meeting_id,
    eventSeq: Number(r.event_seq),
    id: r.id,
    attempts: r.attempts,
    createdAt: date(r.created_at),
    eventId: r.event_id,
    body,
    endpoint: {
      id: r.endpoint_id,
      url: r.url,
      sealedSecret: r.sealed_secret,
      sealedPreviousSecret: r.sealed_previous_secret,
      previousSecretExpiresAt: r.previous_secret_expires_at === null ? null : date(r.previous_secret_expires_at),
    },
  };
}

/** The keys of owed deliveries as one json parameter, for `json_to_recordset(?::json) as k(${OWED_KEY_COLUMNS})`. */
const owedKeys = (keys: readonly OwedKey[]) => JSON.stringify(keys.map((k) => ({ endpoint_id: k.endpointId, meeting_id: k.meetingId, event_seq: k.eventSeq, delivery_seq: k.seq })));
const OWED_KEY_COLUMNS = "endpoint_id varchar, meeting_id varchar, event_seq bigint, delivery_seq bigint";

/** Gives claimed deliveries that were not sent back at once, rather than when their lease runs out: for a worker that stops. */
export async function releaseClaims(db: Knex, claimed: readonly OwedKey[]): Promise<void> {
  if (claimed.length === 0) return;
  await db.raw(
    `update pending_deliveries p set lease_until = null
     from json_to_recordset(?::json) as k(${OWED_KEY_COLUMNS})
     where (p.endpoint_id, p.meeting_id, p.event_seq, p.delivery_seq) = (k.endpoint_id, k.meeting_id, k.event_seq, k.delivery_seq)`,
    [owedKeys(claimed)],
  );
}

interface AttemptOutcome {
  at: Date;
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** One attempt and where it leaves its delivery: delivered, failed for good (disabling the endpoint or not), or due again. */
export interface Settlement {
  seq: number;
  endpointId: string;
  attempt: number;
  outcome: AttemptOutcome;
  next: { state: "delivered" } | { state: "failed"; disable: boolean } | { state: "pending"; nextAttemptAt: Date };
}

/**
 * How stale an endpoint's recorded last success may be: a success within
 * this of the one recorded does not write the endpoint's row again, so a busy
 * endpoint's row is written about once a second, not once a batch.
 * disablesEndpoint allows for it.
 */
export const LAST_SUCCESS_GRAIN_MS = 1_000;

const SETTLE_ATTEMPTS = namedStatement(
  "webhooks_settle_attempts",
  `with outcome as (
       select * from json_to_recordset(?::json) as o(seq bigint, endpoint_id varchar, attempt int, at timestamptz, status int, error text,
                                                     duration_ms int, state varchar, next_attempt_at timestamptz, disable boolean)
     ), earlier as (
       -- A retry's attempt takes the row's place of the one before it, which joins the earlier ones (all CTEs see the rows as they were).
       insert into delivery_attempts (delivery_seq, attempt, at, status, error, duration_ms)
       select d.seq, d.attempts, d.last_attempt_at, d.last_status, d.last_error, d.last_duration_ms
       from outcome o join deliveries d on d.seq = o.seq
       where o.attempt > 1 and d.last_attempt_at is not null and d.attempts < o.attempt
       on conflict (delivery_seq, attempt) do nothing
     ), settled as (
       update deliveries d
       set state = o.state, attempts = o.attempt, next_attempt_at = coalesce(o.next_attempt_at, d.next_attempt_at),
           last_attempt_at = o.at, last_status = o.status, last_error = o.error, last_duration_ms = o.duration_ms
       from outcome o where d.seq = o.seq and d.attempts <= o.attempt
       returning d.seq, d.endpoint_id, d.meeting_id, d.event_seq, d.state, d.next_attempt_at
     ), done as (
       delete from pending_deliveries p using settled s
       where s.state <> 'pending' and (p.endpoint_id, p.meeting_id, p.event_seq, p.delivery_seq) = (s.endpoint_id, s.meeting_id, s.event_seq, s.seq)
     ), again as (
       -- Owed again at its next attempt's time; owed anew should a repeated attempt have settled it meanwhile.
       insert into pending_deliveries (endpoint_id, meeting_id, event_seq, delivery_seq, next_attempt_at)
       select endpoint_id, meeting_id, event_seq, seq, next_attempt_at from settled where state = 'pending'
       on conflict (endpoint_id, meeting_id, event_seq, delivery_seq) do update set next_attempt_at = excluded.next_attempt_at, lease_until = null
     ), of_endpoint as (
       select endpoint_id, max(at) filter (where state = 'delivered') as succeeded_at, bool_or(disable) as disable
       from outcome group by endpoint_id
     ), endpoints_settled as (
       update endpoints e
       set last_success_at = greatest(e.last_success_at, p.succeeded_at),
           enabled = e.enabled and not (p.disable and p.succeeded_at is null)
       from of_endpoint p
       where e.id = p.endpoint_id
         and ((p.succeeded_at is not null and (e.last_success_at is null or e.last_success_at < p.succeeded_at - ? * interval '1 millisecond')) or p.disable)
     )
     -- A probe of the pending key per settled delivery (a subplan; a join may be planned to read every owed delivery).
     select exists (
       select 1 from settled s
       where s.state <> 'pending'
         and (select later.event_seq from pending_deliveries later
              where later.endpoint_id = s.endpoint_id and later.meeting_id = s.meeting_id and later.event_seq > s.event_seq
              order by later.event_seq limit 1) is not null
     ) as unblocked`,
);

/**
 * Writes attempts and where they leave their deliveries, all in one
 * statement (so at once, or not at all): each attempt and its delivery's
 * state in one update of the delivery's row, in place (the attempt before
 * it, if any, moved to `delivery_attempts`); a settled delivery's pending row
 * deleted, a retried one's due time moved and its lease ended; the last success of endpoints that took one
 * (when it moved on by more than LAST_SUCCESS_GRAIN_MS), and endpoints to
 * disable, unless the same batch holds a success of theirs. A delivery that
 * is gone (its endpoint was deleted meanwhile) is passed over. Whether a
 * settled delivery was holding back a later event of its meeting for its
 * endpoint, which is due now.
 * Sent by name (runNamed), like the claim.
 */
export async function settleAttempts(db: Knex, settlements: readonly Settlement[]): Promise<boolean> {
  if (settlements.length === 0) return false;
  const outcomes = settlements.map((s) => ({
    seq: s.seq,
    endpoint_id: s.endpointId,
    attempt: s.attempt,
    at: s.outcome.at.toISOString(),
    status: s.outcome.status,
    error: s.outcome.error,
    duration_ms: s.outcome.durationMs,
    state: s.next.state,
    next_attempt_at: s.next.state === "pending" ? s.next.nextAttemptAt.toISOString() : null,
    disable: s.next.state === "failed" && s.next.disable,
  }));
  const rows = await runNamed<{ unblocked: boolean }>(db, SETTLE_ATTEMPTS, [JSON.stringify(outcomes), LAST_SUCCESS_GRAIN_MS]);
  return rows[0]?.unblocked ?? false;
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
  const rows = endpoints.map((e) => ({ id: newDeliveryId(), endpoint_id: e.id }));
  const { rows: queued } = await db.raw<{ rows: { id: string }[] }>(
    `with owed_to as (
       -- As recording does: the event and the endpoints locked against a delete (the purge, or the endpoint's), nothing queued for one gone.
       select e.id from endpoints e, (select seq from events where seq = ? for key share) ev
       where e.id in (select endpoint_id from json_to_recordset(?::json) as r(id varchar, endpoint_id varchar))
       for key share of e
     ), queued as (
       insert into deliveries (id, endpoint_id, event_seq, meeting_id, state)
       select id, endpoint_id, ?, ?, 'pending' from json_to_recordset(?::json) as r(id varchar, endpoint_id varchar)
       where endpoint_id in (select id from owed_to)
       returning seq, id, endpoint_id, meeting_id, event_seq, next_attempt_at
     ), owed as (
       insert into pending_deliveries (endpoint_id, meeting_id, event_seq, delivery_seq, next_attempt_at)
       select endpoint_id, meeting_id, event_seq, seq, next_attempt_at from queued
     )
     select id from queued order by seq`,
    [q.eventSeq, JSON.stringify(rows), q.eventSeq, q.meetingId, JSON.stringify(rows)],
  );
  return queued.map((r) => r.id);
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

interface DeliveryRow {
  seq: number;
  id: string;
  event_id: string;
  type: EventType;
  state: DeliveryView["state"];
  next_attempt_at: Date | string;
  created_at: Date | string;
  attempts: number;
  last_attempt_at: Date | string | null;
  last_status: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
}

/** Deliveries with their attempts, newest first: of one endpoint (paged) or by id. */
export async function listDeliveries(db: Knex, q: { endpointId: string; afterSeq?: number; limit: number } | { ids: readonly string[] }): Promise<DeliveryView[]> {
  const query = db("deliveries as d").join("events as ev", "ev.seq", "d.event_seq").orderBy("d.seq", "desc");
  if ("ids" in q) query.whereIn("d.id", [...q.ids]);
  else {
    query.where("d.endpoint_id", q.endpointId).limit(q.limit);
    if (q.afterSeq !== undefined) query.where("d.seq", "<", q.afterSeq);
  }
  const rows = await query.select<DeliveryRow[]>(
    "d.seq",
    "d.id",
    "ev.id as event_id",
    "ev.type",
    "d.state",
    "d.next_attempt_at",
    "d.created_at",
    "d.attempts",
    "d.last_attempt_at",
    "d.last_status",
    "d.last_error",
    "d.last_duration_ms",
  );
  const earlier = rows.some((r) => r.attempts > 1 || (r.attempts > 0 && r.last_attempt_at === null))
    ? await db("delivery_attempts").whereIn("delivery_seq", rows.map((r) => r.seq)).orderBy(["delivery_seq", "attempt"]).select<{ delivery_seq: number; attempt: number; at: Date | string; status: number | null; error: string | null; duration_ms: number }[]>("*")
    : [];
  return rows.map((r) => {
    const stored = earlier.filter((a) => a.delivery_seq === r.seq);
    // The latest attempt is on the row (unless written before it was kept there, or also moved by a repeated attempt).
    const latest = r.last_attempt_at !== null && !stored.some((a) => a.attempt === r.attempts) ? [{ at: r.last_attempt_at, status: r.last_status, error: r.last_error, duration_ms: r.last_duration_ms ?? 0 }] : [];
    return {
      seq: r.seq,
      id: r.id,
      eventId: r.event_id,
      eventType: r.type,
      state: r.state,
      nextAttemptAt: r.state === "pending" ? date(r.next_attempt_at) : null,
      createdAt: date(r.created_at),
      attempts: [...stored, ...latest].map((a) => ({ at: date(a.at), status: a.status, error: a.error, durationMs: a.duration_ms })),
    };
  });
}

/** The list position of one of an endpoint's deliveries, for `startingAfter`. */
export async function deliverySeq(db: Knex, endpointId: string, id: string): Promise<number | undefined> {
  const row = await db("deliveries").where({ id, endpoint_id: endpointId }).first<{ seq: number } | undefined>("seq");
  return row?.seq;
}
