import { AppError, currentDeadline, deadlinePassed, internalError, invalidRequest, isBackingServiceUnavailable, unavailable, withDeadline } from "@sched/errors";
import { Caller, type Endpoint, type HttpReply, type ReplyOf } from "@sched/proto";
import type { Logger } from "@sched/logging";
import type { z } from "zod";
import { declaresStatus } from "./declaredStatuses.js";
import { checkedHttpReply } from "./httpReply.js";
import { DEFAULT_TIMEOUT_MS, type EndpointBinding, type RequestContext } from "./types.js";

export const CALLER_HEADER = "Sched-Caller";
/** The request's deadline, in epoch milliseconds: past it the requester has given up. */
export const DEADLINE_HEADER = "Sched-Deadline";

/**
 * The deadline of a request about to be sent: its own time-out from now,
 * but never later than the deadline of the request being served, whose
 * requester will not wait longer.
 */
export function requestDeadline(timeoutMs: number | undefined, now = Date.now()): number {
  const own = now + (timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const inherited = currentDeadline();
  return inherited === undefined ? own : Math.min(own, inherited);
}

/**
 * The deadline a request arrived with. A requester of an earlier release
 * sends none: the default time-out from its arrival stands in.
 */
export function decodeDeadline(raw: string | undefined, now = Date.now()): number {
  const deadline = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(deadline) ? deadline : now + DEFAULT_TIMEOUT_MS;
}

/** Each caller's header text, made once: a gateway keeps one Caller object per key for as long as it caches the key. */
const encodedCallers = new WeakMap<Caller, string>();

export function encodeCaller(caller: Caller): string {
  let encoded = encodedCallers.get(caller);
  if (encoded === undefined) {
    encoded = JSON.stringify(caller);
    encodedCallers.set(caller, encoded);
  }
  return encoded;
}

/**
 * Callers decoded lately, by their header text: the same few keys make most
 * requests, and the same text always decodes to the same caller. Frozen, as
 * they are shared by requests. Emptied when full, which costs only a parse.
 */
const decodedCallers = new Map<string, Readonly<Caller>>();
const DECODED_CALLERS_KEPT = 1_000;

/** A missing or malformed caller header means no caller: public handlers then refuse the request. */
export function decodeCaller(raw: string | undefined): Caller | undefined {
  if (!raw) return undefined;
  const known = decodedCallers.get(raw);
  if (known) return known;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = Caller.safeParse(value);
  if (!parsed.success) return undefined;
  if (decodedCallers.size >= DECODED_CALLERS_KEPT) decodedCallers.clear();
  const caller = deepFreeze(parsed.data);
  decodedCallers.set(raw, caller);
  return caller;
}

function deepFreeze<T extends object>(value: T): T {
  for (const field of Object.values(value)) if (typeof field === "object" && field !== null) deepFreeze(field as object);
  return Object.freeze(value);
}

/**
 * Runs one request through validation, the handler and reply validation, the
 * same way on every bus wiring. A request whose deadline has passed is
 * dropped unread: its requester has given up, and the work would only take
 * time and connections from requests still awaited. The handler runs under
 * the deadline, which nested requests and the database pool respect. A route's
 * handler that answers a status its contract does not declare is a
 * programming error: logged with the subject and status, never sent. A
 * database (or other backing service) that is down or full is a 503 with
 * Retry-After; anything else not an AppError becomes a bare internal_error:
 * no stack, SQL or internal name crosses the bus.
 */
export async function dispatch(binding: EndpointBinding, raw: unknown, ctx: RequestContext, logger: Logger): Promise<Served> {
  if (ctx.deadline <= Date.now()) {
    logger.debug({ subject: ctx.subject }, "request dropped: its deadline passed before it was served");
    throw deadlinePassed();
  }
  // The input is asked for only to say what is wrong with a request that fails: zod checks
  // with `reportInput` at several times the cost of a plain check, paid by every request.
  const request = binding.endpoint.request;
  let parsed = request.safeParse(raw);
  if (!parsed.success) parsed = request.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw invalidRequest(parsed.error, { httpEnvelope: binding.endpoint.kind === "route" });
  let reply: unknown;
  try {
    reply = await withDeadline(ctx.deadline, () => binding.handler(parsed.data as never, ctx));
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (isBackingServiceUnavailable(err)) {
      logger.warn({ err, subject: ctx.subject }, "backing service unavailable; answered 503");
      throw unavailable();
    }
    logger.error({ err, subject: ctx.subject }, "handler failed");
    throw internalError();
  }
  const { endpoint } = binding;
  if (endpoint.kind === "route") {
    // A route's reply is checked as an HttpReply by hand (the same outcome, a third of the time); the schema is asked only why one fails.
    const known = checkedHttpReply(reply);
    if (!known) throw offContract(logger, ctx.subject, endpoint.reply.safeParse(reply).error?.issues ?? []);
    if (!declaresStatus(endpoint, known.status)) {
      logger.error({ subject: ctx.subject, status: known.status }, "handler answered a status its route does not declare");
      throw internalError();
    }
    return { kind: "route", reply: known };
  }
  const checked = endpoint.reply.safeParse(reply);
  if (!checked.success) throw offContract(logger, ctx.subject, checked.error.issues);
  return { kind: "request", reply: checked.data };
}

/** What a served request answers: a route's HttpReply (it crosses the bus split in two), or an internal endpoint's reply. */
export type Served = { kind: "route"; reply: HttpReply } | { kind: "request"; reply: unknown };

function offContract(logger: Logger, subject: string, wrong: readonly unknown[]): AppError {
  logger.error({ subject, issues: wrong.slice(0, 3) }, "handler reply does not match its contract");
  return internalError();
}

/**
 * A reply as the requester's contract declares it, checked on arrival by the
 * endpoint's `received` schema: one that does not match (a service of another
 * release) is logged and answered as the service's own mismatch is, 500.
 */
export function receivedReply<E extends Endpoint>(endpoint: E, value: unknown, logger: Logger): ReplyOf<E> {
  const checked = parsedBy<E["received"]>(endpoint.received, value);
  if (checked.success) return checked.data;
  logger.error({ subject: endpoint.subject, issues: checked.error.issues.slice(0, 3) }, "reply does not match its contract");
  throw internalError();
}

/**
 * What `schema` makes of a value, typed by the schema's own type: called with
 * the schema's type named (`parsedBy<N["payload"]>`), a generic contract's
 * payload or reply keeps its type, where zod's own method on a generic
 * definition's member gives only `unknown`.
 */
export function parsedBy<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  return schema.safeParse(value);
}
