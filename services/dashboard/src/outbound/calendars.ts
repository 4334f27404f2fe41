import type { Bus } from "@sched/bus";
import {
  CalendarConnection,
  CalendarConnectionList,
  connectionsCalendars,
  connectionsConnectCalDav,
  connectionsDelete,
  connectionsList,
  connectionsUpdate,
  invitesStartDashboardConsent,
  ProviderCalendarList,
  type OAuthProvider as OAuthProviderName,
  type UserProfile,
} from "@sched/proto";
import type { z } from "zod";
import type { CalDavAccount } from "../domain/forms.js";
import { actingFor } from "./caller.js";

/**
 * The providers connected by OAuth consent: the connections page offers a
 * button for each, so another provider is one more line here.
 */
export const OAUTH_PROVIDERS = [
  { provider: "google", label: "Google Calendar" },
  { provider: "microsoft", label: "Microsoft 365 / Outlook.com" },
] as const satisfies ReadonlyArray<{ provider: OAuthProviderName; label: string }>;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

/** A provider's name as people know it. */
export function providerLabel(provider: string): string {
  return OAUTH_PROVIDERS.find((p) => p.provider === provider)?.label ?? (provider === "caldav" ? "CalDAV" : provider);
}

export type ProviderCalendar = z.infer<typeof ProviderCalendarList>["data"][number];

/**
 * The invites service's calendar connections, asked over the bus for the
 * signed-in user. Connections belong to the account, not to a mode: only
 * live data uses them, so the dashboard acts as live here, whichever data
 * it shows (test keys never reach a provider).
 */
export class CalendarsClient {
  constructor(private readonly bus: Bus) {}

  private as(user: UserProfile) {
    return { caller: actingFor(user, "live") };
  }

  async list(user: UserProfile): Promise<CalendarConnection[]> {
    const reply = await this.bus.request(connectionsList, { params: {}, query: {}, body: undefined }, this.as(user));
    return CalendarConnectionList.parse(reply.body).data;
  }

  /**
   * Where to send the browser to grant access; the provider then redirects
   * to the API's callback, which sends the browser back to the calendars page.
   */
  async startConsent(user: UserProfile, provider: OAuthProvider): Promise<string> {
    return (await this.bus.request(invitesStartDashboardConsent, { userId: user.id, provider: provider.provider })).authorizationUrl;
  }

  /** Checked with the server first: a wrong password is a 400 that says so. */
  async connectCalDav(user: UserProfile, account: CalDavAccount): Promise<CalendarConnection> {
    const reply = await this.bus.request(connectionsConnectCalDav, { params: {}, query: {}, body: account }, this.as(user));
    return CalendarConnection.parse(reply.body);
  }

  async calendars(user: UserProfile, id: string): Promise<ProviderCalendar[]> {
    const reply = await this.bus.request(connectionsCalendars, { params: { id }, query: {}, body: undefined }, this.as(user));
    return ProviderCalendarList.parse(reply.body).data;
  }

  async setBusyCalendars(user: UserProfile, id: string, busyCalendars: string[]): Promise<CalendarConnection> {
    const reply = await this.bus.request(connectionsUpdate, { params: { id }, query: {}, body: { busyCalendars } }, this.as(user));
    return CalendarConnection.parse(reply.body);
  }

  async makeDefault(user: UserProfile, id: string): Promise<CalendarConnection> {
    const reply = await this.bus.request(connectionsUpdate, { params: { id }, query: {}, body: { default: true } }, this.as(user));
    return CalendarConnection.parse(reply.body);
  }

  async remove(user: UserProfile, id: string): Promise<void> {
    await this.bus.request(connectionsDelete, { params: { id }, query: {}, body: undefined }, this.as(user));
  }
}
