import type { Caller } from "@sched/proto";
import type { ServerResponse } from "node:http";

/**
 * What the gateway learns about a request on its way through, kept on
 * its response (express's `res.locals` types every entry as `any`): its id at
 * once, its route's template once matched, its caller once its key is
 * resolved. The error envelope and the request log read it when answering.
 */
export interface RequestFacts {
  requestId?: string | undefined;
  routePath?: string | undefined;
  caller?: Caller | undefined;
}

/** Kept on the response itself: a WeakMap entry a request costs its set, its look-ups and the collector's ephemeron work, a few µs. */
const FACTS = Symbol("sched.requestFacts");
type WithFacts = ServerResponse & { [FACTS]?: RequestFacts };

/**
 * Adds what was just learned about the request answered by `res`. The facts
 * are one object of one shape from the first call on, its fields set in
 * place: a copy and an `Object.assign` a call were among the gateway's
 * larger own costs in a profile of creates.
 */
export function learn(res: ServerResponse, facts: RequestFacts): void {
  let known = (res as WithFacts)[FACTS];
  if (!known) {
    known = { requestId: undefined, routePath: undefined, caller: undefined };
    (res as WithFacts)[FACTS] = known;
  }
  if (facts.requestId !== undefined) known.requestId = facts.requestId;
  if (facts.routePath !== undefined) known.routePath = facts.routePath;
  if (facts.caller !== undefined) known.caller = facts.caller;
}

/** What is known so far about the request answered by `res`. */
export function known(res: ServerResponse): Readonly<RequestFacts> {
  return (res as WithFacts)[FACTS] ?? {};
}
