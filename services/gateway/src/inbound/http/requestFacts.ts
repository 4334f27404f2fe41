import type { Caller } from "@sched/proto";
import type { ServerResponse } from "node:http";

/**
 * What the gateway learns about a request on its way through, kept beside
 * its response (express's `res.locals` types every entry as `any`): its id at
 * once, its route's template once matched, its caller once its key is
 * resolved. The error envelope and the request log read it when answering.
 */
export interface RequestFacts {
  requestId?: string;
  routePath?: string;
  caller?: Caller;
}

const learned = new WeakMap<ServerResponse, RequestFacts>();

/** Adds what was just learned about the request answered by `res`. */
export function learn(res: ServerResponse, facts: RequestFacts): void {
  const known = learned.get(res);
  if (known) Object.assign(known, facts);
  else learned.set(res, { ...facts });
}

/** What is known so far about the request answered by `res`. */
export function known(res: ServerResponse): Readonly<RequestFacts> {
  return learned.get(res) ?? {};
}
