import type { ConsentOutcome } from "@sched/proto";

/** A message the calendars page shows on arrival, and whether it tells of something that went wrong. */
export interface Notice {
  text: string;
  failed: boolean;
}

/** The message for a consent's outcome at the provider called `label` (e.g. "Google Calendar"). */
export function consentNotice(outcome: ConsentOutcome, label: string): Notice {
  switch (outcome) {
    case "connected":
      return { text: `${label} connected.`, failed: false };
    case "refused":
      return { text: `${label} was not connected: access was not granted on the consent screen.`, failed: true };
    case "error":
      return { text: `${label} could not be connected. Please try again.`, failed: true };
  }
}
