import type { CapturedMail } from "@sched/testing/smtp";
import type { CaughtMail, OwingMeeting } from "./domain/invites.js";
import { UPDATED_SUFFIX } from "./domain/writes.js";

export interface ListedMeeting {
  id: string;
  title: string;
  participants: string[];
}

/** Every meeting in the calendar of `apiKey`'s user, through the public list, page by page. */
export async function listMeetings(gatewayUrl: string, apiKey: string): Promise<ListedMeeting[]> {
  const meetings: ListedMeeting[] = [];
  for (let after: string | undefined; ; ) {
    const url = new URL("/v1/meetings?filter=all&limit=100", gatewayUrl);
    if (after) url.searchParams.set("startingAfter", after);
    const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(15_000) });
    if (res.status !== 200) throw new Error(`the meetings list answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { data: ListedMeeting[]; hasMore: boolean };
    meetings.push(...page.data);
    if (!page.hasMore || page.data.length === 0) return meetings;
    after = page.data.at(-1)!.id;
  }
}

/** What each meeting owes: its creation, and its update when its title carries one. */
export function owingMeetings(meetings: readonly ListedMeeting[], uidDomain: string): OwingMeeting[] {
  return meetings.map((m) => ({ uid: `${m.id}@${uidDomain}`, changes: m.title.endsWith(UPDATED_SUFFIX) ? 2 : 1, participants: m.participants }));
}

/** The e-mails the catcher received for any of `recipients`, as the invite count reads them. */
export function mailsTo(mails: readonly CapturedMail[], recipients: readonly string[]): CaughtMail[] {
  return mails
    .filter((m) => m.envelopeTo.some((r) => recipients.includes(r)))
    .map((m) => ({ recipients: m.envelopeTo, ...(m.mail.messageId ? { messageId: m.mail.messageId } : {}), ...(m.ics !== undefined ? { ics: m.ics } : {}) }));
}
