export interface SessionPolicy {
  /** A session nobody used for this long is over. */
  idleMs: number;
  /** A session is over this long after sign-in, used or not. */
  maxAgeMs: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = { idleMs: 30 * 60_000, maxAgeMs: 12 * 60 * 60_000 };

/**
 * Writing the last use at most this often keeps a busy page from writing on
 * every request; a tenth of a short idle time, so that use within it always
 * counts.
 */
const TOUCH_EVERY_MS = 60_000;

export function sessionExpired(session: { createdAt: Date; lastSeenAt: Date }, now: Date, policy: SessionPolicy): boolean {
  return now.getTime() - session.lastSeenAt.getTime() >= policy.idleMs || now.getTime() - session.createdAt.getTime() >= policy.maxAgeMs;
}

/** Whether the session's last use is old enough to be written again. */
export function needsTouch(lastSeenAt: Date, now: Date, policy: SessionPolicy): boolean {
  return now.getTime() - lastSeenAt.getTime() >= Math.min(TOUCH_EVERY_MS, policy.idleMs / 10);
}

/** The session cookie: never readable by scripts, not sent on cross-site posts, and only over TLS where TLS is used. */
export function sessionCookieOptions(secure: boolean, policy: SessionPolicy) {
  return { httpOnly: true, sameSite: "lax" as const, secure, path: "/dashboard", maxAge: policy.maxAgeMs };
}
