import { formatTimestamp } from "@sched/proto";
import { AppError } from "@sched/errors";
import type { Preferences, WorkingHoursEntry } from "@sched/proto";
import { samePreferences } from "./preferences.js";

/** A user as stored, before it is shaped for a reply. */
export interface StoredUser {
  id: string;
  email: string;
  name: string;
  timezone: string;
  workingHours: WorkingHoursEntry[];
  preferences: Preferences;
  createdAt: Date;
  updatedAt: Date;
}

/** The one form of an e-mail address that is stored and compared. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export { formatTimestamp };

/** GET /v1/me and the lookup other services make. */
export function profileView(user: StoredUser) {
  return { id: user.id, email: user.email, name: user.name, timezone: user.timezone, workingHours: user.workingHours, preferences: user.preferences };
}

/** A user as the admin API shows it. */
export function adminUserView(user: StoredUser) {
  return { id: user.id, email: user.email, name: user.name, timezone: user.timezone, createdAt: formatTimestamp(user.createdAt) };
}

export interface ProfileChanges {
  name?: string;
  timezone?: string;
  workingHours?: WorkingHoursEntry[];
  preferences?: Preferences;
}

/** Only the fields whose value differs from what is stored; an empty result changes nothing. */
export function effectiveChanges(user: StoredUser, wanted: ProfileChanges): ProfileChanges {
  const changes: ProfileChanges = {};
  if (wanted.name !== undefined && wanted.name !== user.name) changes.name = wanted.name;
  if (wanted.timezone !== undefined && wanted.timezone !== user.timezone) changes.timezone = wanted.timezone;
  if (wanted.workingHours !== undefined && !sameWorkingHours(wanted.workingHours, user.workingHours)) {
    changes.workingHours = wanted.workingHours;
  }
  if (wanted.preferences !== undefined && !samePreferences(wanted.preferences, user.preferences)) changes.preferences = wanted.preferences;
  return changes;
}

function sameWorkingHours(a: readonly WorkingHoursEntry[], b: readonly WorkingHoursEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.day === b[i]!.day && e.start === b[i]!.start && e.end === b[i]!.end);
}

export function userExists(): AppError {
  return new AppError("user_exists", "A user with this e-mail address already exists.", { param: "email" });
}
