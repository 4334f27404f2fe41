import type { z } from "zod";

/**
 * A request/reply endpoint on the bus. The subject carries the contract's
 * version (`accounts.v1.authenticate`); a breaking change adds `v2` beside it.
 */
export interface Endpoint<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly request: Req;
  readonly reply: Res;
}

export function endpoint<Req extends z.ZodType, Res extends z.ZodType>(
  subject: string,
  request: Req,
  reply: Res,
): Endpoint<Req, Res> {
  return { subject, request, reply };
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
  readonly subject: S;
  readonly stream: StreamDef;
  readonly payload: P;
}

export function eventDef<S extends string, P extends z.ZodType>(stream: StreamDef, name: S, payload: P): EventDef<`${string}`, P> {
  return { subject: `${stream.subjectPrefix}.${name}`, stream, payload };
}

/** A fan-out notice to every live subscriber (every replica); not stored. */
export interface NoticeDef<P extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly payload: P;
}

export function noticeDef<P extends z.ZodType>(subject: string, payload: P): NoticeDef<P> {
  return { subject, payload };
}

export type RequestOf<E extends Endpoint> = z.input<E["request"]>;
export type ReplyOf<E extends Endpoint> = z.output<E["reply"]>;
export type PayloadOf<E extends EventDef | NoticeDef> = z.output<E["payload"]>;
