import { AppError } from "@sched/errors";
import type { ServerResponse } from "node:http";

/**
 * Whether a request has been handed on to a service. Node's request
 * time-out fires for any request not wholly received (a route that takes no
 * body never reads one a client sends), even while the gateway is working
 * on it: once handed on, the client gets the service's answer (or a 503),
 * never a 408 for something that was done; once timed out, it is never
 * handed on.
 */
/** On the response itself, as requestFacts.ts keeps its facts. */
const HANDOVER = Symbol("sched.handover");
type WithHandover = ServerResponse & { [HANDOVER]?: "handed_on" | "timed_out" };

/** Marks the request as handed on; a 408 if it already timed out (its client was told so). */
export function handOn(res: ServerResponse): void {
  if ((res as WithHandover)[HANDOVER] === "timed_out") throw new AppError("request_timeout", "The request was not received in time.");
  (res as WithHandover)[HANDOVER] = "handed_on";
}

/** On Node's request time-out: false when the request was already handed on, else true and it never will be. */
export function timeOut(res: ServerResponse): boolean {
  if ((res as WithHandover)[HANDOVER] === "handed_on") return false;
  (res as WithHandover)[HANDOVER] = "timed_out";
  return true;
}
