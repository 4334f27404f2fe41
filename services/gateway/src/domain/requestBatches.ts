/** Splits off the oldest `max` items as one batch. */
export function takeBatch<T>(items: readonly T[], max: number): { batch: T[]; rest: T[] } {
  return { batch: items.slice(0, max), rest: items.slice(max) };
}

