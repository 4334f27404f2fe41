import type { Caller } from "@sched/proto";
import type { ServerResponse } from "node:http";

/**
 * What the gateway learns about a request on its way through, kept on
 * its response (express's `res.locals` types every entry as `any`): its id at
 * once, its route's template once matched, its caller once its key is
 * resolved. The error envelope and the request log read it when answering.
 */
export interface RequestFacts {
  requestId?: string;
  routePath?: string;
  caller?: Caller;
}

/** Kept on the response itself: a WeakMap entry a request costs its set, its look-ups and the collector's ephemeron work, a few µs. */
const FACTS = Symbol("sched.requestFacts");
type WithFacts = ServerResponse & { [FACTS]?: RequestFacts };

/** Adds what was just learned about the request answered by `res`. */
export function learn(res: ServerResponse, facts: RequestFacts): void {
  const known = (res as WithFacts)[FACTS];
  if (known) Object.assign(known, facts);
  else (res as WithFacts)[FACTS] = { ...facts };
}

/** What is known so far about the request answered by `res`. */
export function known(res: ServerResponse): Readonly<RequestFacts> {
  return (res as WithFacts)[FACTS] ?? {};
}
