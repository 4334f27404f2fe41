import type { BusyInterval } from "@sched/proto";
import { createDAVClient, type DAVCalendar, type DAVResponse } from "tsdav";
import { lookup } from "node:dns/promises";
import { isNonPublicAddress } from "@sched/net";
import type { CalDavCredentials } from "../domain/tokenCipher.js";
import { busyOfIcs } from "../domain/caldavBusy.js";
import { DeliveryFailure } from "../domain/retry.js";

export interface CalDavCalendar {
  /** The calendar collection's URL: its id for `busyCalendars`. */
  id: string;
  name: string;
}

type DavClient = Awaited<ReturnType<typeof createDAVClient>>;

/** Why a CalDAV server refused, in words for the user. */
export class CalDavRefusal extends Error {
  constructor(
    message: string,
    readonly kind: "credentials" | "unreachable" | "private",
  ) {
    super(message);
    this.name = "CalDavRefusal";
  }
}

/**
 * A CalDAV account through tsdav: discovery (which checks the password),
 * its event calendars, the events of chosen calendars over a range as busy
 * time, and the organizer's copy of a meeting (RFC 6638: a server that
 * schedules sends the invitations to the ATTENDEEs itself).
 */
export class CalDavAccount {
  private constructor(
    private readonly client: DavClient,
    private readonly timeoutMs: number,
    private readonly serverUrl: string,
  ) {}

  /**
   * Logs in and discovers the account's calendar home; a wrong password, an
   * unreachable server or (unless allowed) one on a non-public address is a
   * CalDavRefusal. The address is checked on every open, as a name may come
   * to point elsewhere.
   */
  static async open(credentials: CalDavCredentials, options: { timeoutMs: number; allowPrivate: boolean; signal?: AbortSignal | undefined }): Promise<CalDavAccount> {
    const { timeoutMs, signal } = options;
    if (!options.allowPrivate) await requirePublicServer(credentials.serverUrl);
    const deadline = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])]);
    try {
      const client = await createDAVClient({
        serverUrl: credentials.serverUrl,
        credentials: { username: credentials.username, password: credentials.password },
        authMethod: "Basic",
        defaultAccountType: "caldav",
        fetchOptions: { signal: deadline },
      });
      return new CalDavAccount(client, timeoutMs, credentials.serverUrl);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/401|403|Invalid credentials/i.test(message)) throw new CalDavRefusal("The CalDAV server refused the username or password (use an app password where the provider asks for one).", "credentials");
      throw new CalDavRefusal(`The CalDAV server could not be reached or found no calendars there: ${message}`, "unreachable");
    }
  }

  /** The calendars that hold events. */
  async calendars(): Promise<CalDavCalendar[]> {
    const found = await this.client.fetchCalendars({ fetchOptions: { signal: AbortSignal.timeout(this.timeoutMs) } });
    return eventCalendars(found).map((c) => ({ id: c.url, name: typeof c.displayName === "string" && c.displayName ? c.displayName : c.url }));
  }

  /**
   * Busy time of the chosen calendars (null: all) over [from, to): every event,
   * and every occurrence of a recurring one, that is neither cancelled nor
   * transparent. The server picks the objects with an occurrence there.
   */
  async busy(chosen: readonly string[] | null, from: string, to: string, signal: AbortSignal): Promise<BusyInterval[]> {
    const calendars = chosen ? chosen.map((url) => ({ url })) : eventCalendars(await this.client.fetchCalendars({ fetchOptions: { signal } }));
    // One calendar-query each, the events' data in its answer: listing the events first and fetching them after would fail on one deleted between.
    const answers = await Promise.all(
      calendars.map((calendar) =>
        this.client.calendarQuery({ url: calendar.url, props: { "d:getetag": {}, "c:calendar-data": {} }, filters: eventsWithin(from, to), depth: "1", fetchOptions: { signal } }),
      ),
    );
    return answers.flat().flatMap((answer) => {
      const ics = calendarDataOf(answer);
      return ics === undefined ? [] : busyOfIcs(ics, from, to);
    });
  }

  /** Where new events go: the first chosen busy calendar, else the account's first event calendar. */
  async eventCalendarUrl(chosen: readonly string[] | null): Promise<string> {
    if (chosen && chosen.length > 0) return chosen[0]!;
    const [first] = await this.calendars();
    if (!first) throw new DeliveryFailure("permanent", "CalDAV: the account has no calendar for events");
    return first.id;
  }

  /** Puts the meeting's event (its whole iCalendar object) in the calendar, creating or replacing it. */
  async putEvent(url: string, ics: string): Promise<void> {
    const res = await this.client.updateObject({ url, data: ics, headers: { "content-type": "text/calendar; charset=utf-8" }, fetchOptions: { signal: AbortSignal.timeout(this.timeoutMs) } });
    if (!res.ok) throw davFailure(res.status, `PUT ${url}`);
  }

  /** The events at these URLs as the server keeps them now, read with one REPORT per calendar; those gone are missing. */
  async readEvents(urls: readonly string[], signal: AbortSignal): Promise<{ url: string; ics: string }[]> {
    const byCalendar = new Map<string, string[]>();
    for (const url of urls) {
      const calendar = url.slice(0, url.lastIndexOf("/") + 1);
      byCalendar.set(calendar, [...(byCalendar.get(calendar) ?? []), url]);
    }
    const read = await Promise.all([...byCalendar].map(([calendar, objectUrls]) => this.multiGet(calendar, objectUrls, signal)));
    return read.flat();
  }

  /** One calendar-multiget REPORT: each event found, with its data; one the server answers 404 for (deleted since) is left out, any other failure throws a DeliveryFailure. */
  private async multiGet(calendar: string, objectUrls: readonly string[], signal: AbortSignal): Promise<{ url: string; ics: string }[]> {
    const paths = objectUrls.map((url) => new URL(url, this.serverUrl).pathname);
    const answers = await this.client.davRequest({
      url: calendar,
      init: {
        method: "REPORT",
        headers: { depth: "1" },
        namespace: "c",
        body: { "calendar-multiget": { _attributes: { "xmlns:d": "DAV:", "xmlns:c": "urn:ietf:params:xml:ns:caldav" }, "d:prop": { "d:getetag": {}, "c:calendar-data": {} }, "d:href": paths } },
      },
      fetchOptions: { signal },
    });
    const located = answers.map((answer) => ({ answer, url: new URL(answer.href ?? calendar, calendar).href }));
    const failed = located.find(({ answer, url }) => !answer.ok && !(answer.status === 404 && paths.includes(new URL(url).pathname)));
    // Judged as a PUT's or DELETE's failure is (a calendar gone is for good); an answer without a status, as a server error.
    if (failed) throw davFailure(failed.answer.status ?? 500, `REPORT ${calendar}`);
    return located.flatMap(({ answer, url }) => {
      const ics = answer.ok ? calendarDataOf(answer) : undefined;
      return ics?.includes("BEGIN:VEVENT") ? [{ url, ics }] : [];
    });
  }

  /** Removes the meeting's event; one already gone is fine. */
  async deleteEvent(url: string): Promise<void> {
    const res = await this.client.deleteObject({ url, fetchOptions: { signal: AbortSignal.timeout(this.timeoutMs) } });
    if (!res.ok && res.status !== 404 && res.status !== 410) throw davFailure(res.status, `DELETE ${url}`);
  }

}

/** An answer's calendar-data: the iCalendar text, whether the XML held it as text or CDATA. */
function calendarDataOf(answer: DAVResponse): string | undefined {
  const data: unknown = answer.props?.calendarData?._cdata ?? answer.props?.calendarData;
  return typeof data === "string" ? data : undefined;
}

/** A calendar-query filter for the events with time in [from, to) (RFC 4791 9.9), as UTC date-times. */
function eventsWithin(from: string, to: string) {
  const utc = (at: string) => `${new Date(at).toISOString().slice(0, 19).replace(/[-:]/g, "")}Z`;
  return [{ "comp-filter": { _attributes: { name: "VCALENDAR" }, "comp-filter": { _attributes: { name: "VEVENT" }, "time-range": { _attributes: { start: utc(from), end: utc(to) } } } } }];
}

async function requirePublicServer(serverUrl: string): Promise<void> {
  const host = new URL(serverUrl).hostname.replace(/^\[|\]$/g, "");
  const addresses = await lookup(host, { all: true }).catch(() => {
    throw new CalDavRefusal(`The CalDAV server's name ${host} does not resolve.`, "unreachable");
  });
  if (addresses.length === 0 || addresses.some((a) => isNonPublicAddress(a.address))) {
    throw new CalDavRefusal("The CalDAV server must be on a public address, not a loopback, private or link-local one.", "private");
  }
}

const eventCalendars = (found: DAVCalendar[]) => found.filter((c) => !c.components || c.components.includes("VEVENT"));

/** A 5xx or 429 may pass; anything else will not. */
function davFailure(status: number, what: string): DeliveryFailure {
  return new DeliveryFailure(status >= 500 || status === 429 ? "transient" : "permanent", `CalDAV: ${what} answered ${status}`);
}
