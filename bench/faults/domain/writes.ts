/**
 * Compares what the client was told about its writes with the meetings that
 * exist once the system has settled. A create is matched to meetings by its
 * Idempotency-Key, which is also the meeting's title (an update appends
 * UPDATED_SUFFIX to it).
 */

export const UPDATED_SUFFIX = " (moved)";

/** The Idempotency-Key a meeting was created with, read from its title. */
export const keyOfTitle = (title: string): string => (title.endsWith(UPDATED_SUFFIX) ? title.slice(0, -UPDATED_SUFFIX.length) : title);

/**
 * accepted: a try was answered 2xx (with this meeting); refused: a
 * final 4xx, so nothing may exist; unknown: the client gave up without a
 * verdict (its last tries timed out, failed or were 5xx/409), so the meeting
 * may exist, at most once.
 */
export type Verdict = { kind: "accepted"; id: string } | { kind: "refused"; status: number } | { kind: "unknown" };

export interface CreateRecord {
  key: string;
  verdict: Verdict;
}

export interface UpdateRecord {
  meetingId: string;
  verdict: Verdict;
}

export interface ExistingMeeting {
  id: string;
  title: string;
}

type Tally = Record<Verdict["kind"], number>;

export interface WriteCheck {
  creates: Tally;
  updates: Tally;
  /** Unknown creates whose meeting exists (once): the write happened though the client never heard. */
  unknownButWritten: number;
  /** Accepted keys without their meeting (or without the meeting the client was given). */
  lost: string[];
  /** Keys with more than one meeting. */
  doubled: string[];
  /** Meetings whose key was refused or never sent. */
  phantom: string[];
  /** Accepted updates whose meeting does not carry them. */
  lostUpdates: string[];
  /** Refused updates whose meeting carries them anyway. */
  phantomUpdates: string[];
}

export function checkWrites(creates: readonly CreateRecord[], updates: readonly UpdateRecord[], existing: readonly ExistingMeeting[]): WriteCheck {
  const byKey = new Map<string, ExistingMeeting[]>();
  for (const m of existing) byKey.set(keyOfTitle(m.title), [...(byKey.get(keyOfTitle(m.title)) ?? []), m]);
  const byId = new Map(existing.map((m) => [m.id, m]));
  const check: WriteCheck = { creates: { accepted: 0, refused: 0, unknown: 0 }, updates: { accepted: 0, refused: 0, unknown: 0 }, unknownButWritten: 0, lost: [], doubled: [], phantom: [], lostUpdates: [], phantomUpdates: [] };

  const sent = new Set<string>();
  for (const { key, verdict } of creates) {
    sent.add(key);
    const found = byKey.get(key) ?? [];
    check.creates[verdict.kind]++;
    if (found.length > 1) check.doubled.push(key);
    if (verdict.kind === "accepted" && !found.some((m) => m.id === verdict.id)) check.lost.push(key);
    if (verdict.kind === "refused" && found.length > 0) check.phantom.push(key);
    if (verdict.kind === "unknown" && found.length > 0) check.unknownButWritten++;
  }
  for (const key of byKey.keys()) if (!sent.has(key)) check.phantom.push(key);

  for (const { meetingId, verdict } of updates) {
    const carried = byId.get(meetingId)?.title.endsWith(UPDATED_SUFFIX) ?? false;
    check.updates[verdict.kind]++;
    if (verdict.kind === "accepted" && !carried) check.lostUpdates.push(meetingId);
    if (verdict.kind === "refused" && carried) check.phantomUpdates.push(meetingId);
  }
  return check;
}
