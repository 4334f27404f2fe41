import { Radicale, radicaleInstalled } from "@sched/testing/radicale";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CalDavAccount } from "../src/outbound/caldav.js";

const PASSWORD = "app-password-1";
const event = (uid: string, start: string, end: string) =>
  ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", "BEGIN:VEVENT", `UID:${uid}`, "DTSTAMP:20310101T000000Z", `DTSTART:${start}`, `DTEND:${end}`, "SUMMARY:Own", "END:VEVENT", "END:VCALENDAR", ""].join("\r\n");
/** Busy intervals are in Unix seconds. */
const at = (iso: string) => Date.parse(iso) / 1000;

describe.runIf(radicaleInstalled())("reading a CalDAV calendar (Radicale)", () => {
  const radicale = new Radicale({ bea: PASSWORD });
  let proxy: Server;
  let proxyUrl = "";
  /** Runs once, after the server has answered the next calendar-query and before its answer reaches the account. */
  let betweenQueryAndAnswer: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    await radicale.start();
    // Every request passes through here to Radicale, so the test can act on the calendar while the account reads it.
    proxy = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (c: Buffer) => chunks.push(c));
      incoming.on("end", () => {
        const body = Buffer.concat(chunks);
        const forwarded = request(new URL(incoming.url!, radicale.url), { method: incoming.method, headers: { ...incoming.headers, host: new URL(radicale.url).host } }, (answer) => {
          const answerChunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => answerChunks.push(c));
          answer.on("end", async () => {
            const meanwhile = incoming.method === "REPORT" && body.includes("calendar-query") ? betweenQueryAndAnswer : undefined;
            if (meanwhile) {
              betweenQueryAndAnswer = undefined;
              await meanwhile();
            }
            outgoing.writeHead(answer.statusCode!, answer.headers);
            outgoing.end(Buffer.concat(answerChunks));
          });
        });
        forwarded.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`;
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await radicale.stop();
  });

  it("is read whole while the owner deletes an event meanwhile: what the server held when asked, not a failure", async () => {
    const own = await radicale.client("bea");
    const url = `${radicale.url}bea/work/`;
    await own.makeCalendar({ url, props: { displayname: "work" } });
    for (const [name, start, end] of [["early", "20310303T080000Z", "20310303T090000Z"], ["late", "20310303T140000Z", "20310303T150000Z"]] as const) {
      expect((await own.createCalendarObject({ calendar: { url }, iCalString: event(name, start, end), filename: `${name}.ics` })).status).toBe(201);
    }
    const account = await CalDavAccount.open({ serverUrl: proxyUrl, username: "bea", password: PASSWORD }, { timeoutMs: 10_000, allowPrivate: true });
    betweenQueryAndAnswer = async () => {
      expect((await own.deleteCalendarObject({ calendarObject: { url: `${url}late.ics`, etag: "" } })).status).toBe(200);
    };

    const busy = await account.busy([`${proxyUrl}bea/work/`], "2031-03-03T00:00:00Z", "2031-03-04T00:00:00Z", AbortSignal.timeout(10_000));
    expect(betweenQueryAndAnswer).toBeUndefined();
    expect(busy.sort((a, b) => a[0] - b[0])).toEqual([
      [at("2031-03-03T08:00:00Z"), at("2031-03-03T09:00:00Z")],
      [at("2031-03-03T14:00:00Z"), at("2031-03-03T15:00:00Z")],
    ]);
    // The next read finds the event gone.
    expect(await account.busy([`${proxyUrl}bea/work/`], "2031-03-03T00:00:00Z", "2031-03-04T00:00:00Z", AbortSignal.timeout(10_000))).toEqual([[at("2031-03-03T08:00:00Z"), at("2031-03-03T09:00:00Z")]]);
  });

  it("reads events by URL with one REPORT, leaving out one deleted since (a 404 in its answer), and fails when the calendar itself is gone", async () => {
    const own = await radicale.client("bea");
    const url = `${radicale.url}bea/home/`;
    await own.makeCalendar({ url, props: { displayname: "home" } });
    expect((await own.createCalendarObject({ calendar: { url }, iCalString: event("kept", "20310305T080000Z", "20310305T090000Z"), filename: "kept.ics" })).status).toBe(201);
    const account = await CalDavAccount.open({ serverUrl: radicale.url, username: "bea", password: PASSWORD }, { timeoutMs: 10_000, allowPrivate: true });

    const read = await account.readEvents([`${url}kept.ics`, `${url}deleted.ics`], AbortSignal.timeout(10_000));
    expect(read.map((e) => e.url)).toEqual([`${url}kept.ics`]);
    expect(read[0]!.ics).toContain("UID:kept");
    await expect(account.readEvents([`${radicale.url}bea/gone/kept.ics`], AbortSignal.timeout(10_000))).rejects.toThrow(/REPORT .* answered 404/);
  });
});
