import { z } from "zod";
import { HttpReply, type JsonText } from "./common.js";

// Every definition on the bus says what it is in `kind`, never guessed from
// its subject: `route` (a public HTTP route's endpoint, forwarded by the
// gateway), `request` (an internal request/reply endpoint between services),
// `event` (a durable domain event), `notice` (a fan-out notice). The bus
// picks the wire form from it.

/**
 * An internal request/reply endpoint on the bus. The subject carries the
 * contract's version (`accounts.v1.authenticate`); a breaking change adds
 * `v2` beside it.
 */
export interface RequestEndpoint<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly kind: "request";
  readonly subject: string;
  readonly request: Req;
  readonly reply: Res;
  /** The reply as its requester checks it on arrival: the reply schema itself. */
  readonly received: Res;
}

/**
 * An answer that sends the client elsewhere (303 See Other): no body, and
 * the address in a `Location` header the handler must give.
 */
export interface Redirect {
  readonly redirect: "Location";
}
export const REDIRECT: Redirect = { redirect: "Location" };

export function isRedirect(reply: z.ZodType | Redirect | null): reply is Redirect {
  return reply !== null && "redirect" in reply;
}

/**
 * The answers of a public route, by status: the body's schema, null for an
 * answer without a body (204), or REDIRECT for one that sends the client on.
 */
export type Replies = { readonly [status: number]: z.ZodType | Redirect | null };

/** The statuses a route's contract declares. */
export type ReplyStatus<R extends Replies> = keyof R & number;

/** One declared answer: its status, its headers, and its body when it has one (as a JsonText too, when `encoded`). */
type DeclaredReply<S extends number, B, Encoded extends boolean> = B extends z.ZodType
  ? { status: S; body: Encoded extends true ? z.output<B> | JsonText<z.output<B>> : z.output<B>; headers?: Record<string, string> }
  : B extends Redirect
    ? { status: S; body?: undefined; headers: { Location: string } & Record<string, string> }
    : { status: S; body?: undefined; headers?: Record<string, string> };

/** What a requester of a route gets back: one of the declared answers, the body as its schema describes it. */
export type RouteReply<R extends Replies> = { [S in ReplyStatus<R>]: DeclaredReply<S, R[S], false> }[ReplyStatus<R>];

/** What a route's handler may return: one of the declared answers, whose body may come already encoded (JsonText). */
export type RouteAnswer<R extends Replies> = { [S in ReplyStatus<R>]: DeclaredReply<S, R[S], true> }[ReplyStatus<R>];

/**
 * The bus endpoint of a public HTTP route: requests of `{params, query,
 * body}` (httpRequest), replies an HttpReply whose status and body are
 * one of `replies`. On the wire every reply is checked as an HttpReply; the
 * declared bodies are checked where the handler is written, by its type.
 */
export interface RouteEndpoint<Req extends z.ZodType = z.ZodType, R extends Replies = Replies, Reply = RouteReply<R>> {
  readonly kind: "route";
  readonly subject: string;
  readonly request: Req;
  readonly reply: typeof HttpReply;
  readonly replies: R;
  /** The reply as its requester checks it on arrival: one of `replies`, its body as that status's schema describes it. */
  readonly received: z.ZodType<Reply>;
}

/** A request/reply endpoint on the bus: a public route's or an internal one. */
export type Endpoint = RequestEndpoint | RouteEndpoint;

export function endpoint<Req extends z.ZodType, Res extends z.ZodType>(subject: string, request: Req, reply: Res): RequestEndpoint<Req, Res> {
  return { kind: "request", subject, request, reply, received: reply };
}

/**
 * The endpoint of a public route: `request` is httpRequest({params, query,
 * body}); `replies` its success answers by status, e.g. `{ 201: Meeting }`
 * or `{ 204: null }`. Its handler's return type follows from them.
 */
export function routeEndpoint<Req extends z.ZodType, const R extends Replies>(subject: string, request: Req, replies: R): RouteEndpoint<Req, R> {
  return { kind: "route", subject, request, reply: HttpReply, replies, received: z.custom<RouteReply<R>>((value) => isDeclaredReply(replies, value)) };
}

/**
 * Whether a reply that came back over the bus is one `replies` declares: a
 * declared status, headers of strings (a redirect's Location among them), and
 * the body that status's schema accepts, or none where it declares none.
 */
function isDeclaredReply(replies: Replies, value: unknown): boolean {
  const head = HttpReply.safeParse(value);
  if (!head.success || !Object.hasOwn(replies, head.data.status)) return false;
  const declared = replies[head.data.status]!;
  const { body, headers } = head.data;
  if (declared === null) return body === undefined;
  if (isRedirect(declared)) return body === undefined && typeof headers?.Location === "string";
  return declared.safeParse(body).success;
}

/** A durable stream of events kept by JetStream (or the in-process log). */
export interface StreamDef {
  readonly name: string;
  /** Subject prefix every event of the stream starts with. */
  readonly subjectPrefix: string;
  /** How long the stream keeps an event; forever when absent. */
  readonly maxAgeMs?: number;
}

/** A durable domain event: delivered at least once to every durable consumer. */
export interface EventDef<S extends string = string, P extends z.ZodType = z.ZodType> {
  readonly kind: "event";
  readonly subject: S;
  readonly stream: StreamDef;
  readonly payload: P;
}

/**
 * Declares an event. Its subject's type ends in its name, so two events with
 * one payload schema (created, updated) are still two types, which a
 * consumer of both tells apart (isEvent in @sched/bus).
 */
export function eventDef<S extends string, P extends z.ZodType>(stream: StreamDef, name: S, payload: P): EventDef<`${string}.${S}`, P> {
  return { kind: "event", subject: `${stream.subjectPrefix}.${name}`, stream, payload };
}

/** A fan-out notice to every live subscriber (every replica); not stored. */
export interface NoticeDef<P extends z.ZodType = z.ZodType> {
  readonly kind: "notice";
  readonly subject: string;
  readonly payload: P;
}

export function noticeDef<P extends z.ZodType>(subject: string, payload: P): NoticeDef<P> {
  return { kind: "notice", subject, payload };
}

export type RequestOf<E extends Endpoint> = z.input<E["request"]>;
/** The reply a requester gets, as its endpoint's `received` checks it: a route's declared answers, an internal endpoint's reply schema. */
export type ReplyOf<E extends Endpoint> = z.output<E["received"]>;
/** What a handler returns: a route's declared answers (a body may be a JsonText), what an internal endpoint's reply schema accepts. */
export type AnswerOf<E extends Endpoint> = E extends RouteEndpoint<z.ZodType, infer R> ? RouteAnswer<R> : z.input<E["reply"]>;
export type PayloadOf<E extends EventDef | NoticeDef> = z.output<E["payload"]>;
