import type { ConsentOutcome, OAuthProvider } from "@sched/proto";

/**
 * How a provider's refusal reads to the person: `access_denied` is their own
 * "no" on the consent screen; anything else (`consent_required`, a server
 * error at the provider…) is a failure they did not choose.
 */
export function refusalOutcome(providerError: string): ConsentOutcome {
  return providerError === "access_denied" ? "refused" : "error";
}

/**
 * Where the callback sends the browser when the consent was started in the
 * dashboard: its calendars page, under the deployment's own dashboard
 * address (configuration, never the request), with only the outcome and the
 * provider in the address: no code, token or state ever travels on.
 */
export function dashboardReturnUrl(dashboardUrl: string, provider: OAuthProvider, outcome: ConsentOutcome): string {
  return `${dashboardUrl.replace(/\/+$/, "")}/calendars?${new URLSearchParams({ consent: outcome, provider }).toString()}`;
}
