import type { OutboxRelay } from "@sched/outbox";

/**
 * Wakes the relay `lingerMs` after the first of a burst of wake() calls, once
 * for the whole burst, so that commits close together are relayed together.
 */
export function lingeringWake(relay: Pick<OutboxRelay, "wake">, lingerMs: number): Pick<OutboxRelay, "wake"> & { cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    wake: () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        relay.wake();
      }, lingerMs);
    },
    cancel: () => {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
