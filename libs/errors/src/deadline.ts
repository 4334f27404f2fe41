import { AsyncLocalStorage } from "node:async_hooks";

// The deadline of the request being served, carried through everything its
// handler awaits: the bus gives a nested request only the time left, and the
// database pool does not queue a request past it.
const current = new AsyncLocalStorage<number>();

/** Runs `work` with `deadline` (epoch milliseconds) as the deadline of everything it does. */
export function withDeadline<T>(deadline: number, work: () => T): T {
  return current.run(deadline, work);
}

/** The deadline (epoch milliseconds) of the request being served, if any. */
export function currentDeadline(): number | undefined {
  return current.getStore();
}

/** Milliseconds left before the current request's deadline (0 or less once passed); undefined outside a request. */
export function remainingMs(now = Date.now()): number | undefined {
  const deadline = current.getStore();
  return deadline === undefined ? undefined : deadline - now;
}
