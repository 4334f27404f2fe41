/** A sign-in link works once, for this long (api-decisions 11). */
export const SIGN_IN_LINK_TTL_MS = 15 * 60_000;

/** When a link made at `now` stops working. */
export function linkExpiry(now: Date): Date {
  return new Date(now.getTime() + SIGN_IN_LINK_TTL_MS);
}

/** The link a user opens: the dashboard's public address, its sign-in page and the token. */
export function signInUrl(dashboardUrl: string, token: string): string {
  return `${dashboardUrl.replace(/\/+$/, "")}/sign-in?${new URLSearchParams({ token }).toString()}`;
}

export interface SignInLimits {
  /** Attempts one client address may make in the window. */
  perAddress: number;
  /** Links one e-mail address may be sent in the window. */
  perEmail: number;
  windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perAddress: 30, perEmail: 5, windowMs: 15 * 60_000 };

/**
 * Whether one more sign-in attempt may go ahead, given how many were made in
 * the window from the address and, when an e-mail is named, for that e-mail.
 */
export function signInAllowed(counts: { byAddress: number; byEmail?: number }, limits: SignInLimits): boolean {
  if (counts.byAddress >= limits.perAddress) return false;
  return counts.byEmail === undefined || counts.byEmail < limits.perEmail;
}
