/** How long the request log keeps a request (api-decisions 11). */
const REQUEST_LOG_DAYS = 7;

export const STATUS_FILTERS = ["all", "2xx", "4xx", "429", "5xx"] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

/** The filter a query string names; anything unknown is every status. */
export function parseStatusFilter(value: unknown): StatusFilter {
  return STATUS_FILTERS.find((f) => f === value) ?? "all";
}

/** The statuses a filter keeps, both ends included; undefined keeps them all. */
export function statusRange(filter: StatusFilter): { min: number; max: number } | undefined {
  switch (filter) {
    case "all":
      return undefined;
    case "2xx":
      return { min: 200, max: 299 };
    case "4xx":
      return { min: 400, max: 499 };
    case "429":
      return { min: 429, max: 429 };
    case "5xx":
      return { min: 500, max: 599 };
  }
}

/** The oldest moment the log still shows at `now`. */
export function logHorizon(now: Date): Date {
  return new Date(now.getTime() - REQUEST_LOG_DAYS * 24 * 60 * 60_000);
}

const DAY_MS = 24 * 60 * 60_000;

/**
 * Where usage counting starts at `now`: the first UTC midnight the log still
 * holds whole, so no day is shown with only its last hours counted.
 */
export function usageSince(now: Date): Date {
  return new Date(Math.ceil(logHorizon(now).getTime() / DAY_MS) * DAY_MS);
}
