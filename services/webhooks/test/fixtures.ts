/** What the delivery worker's tests deliver, and the receiver they deliver it to. */
import type { PublicEvent } from "@sched/proto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A webhook receiver on loopback that answers 204 (`answerAfterMs` after the body came) and keeps the ids of the events it got, in arrival order. */
export async function startEventReceiver(answerAfterMs = 0): Promise<{ url: string; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push((JSON.parse(Buffer.concat(chunks).toString("utf8")) as PublicEvent).id);
      setTimeout(() => res.writeHead(204).end(), answerAfterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The `n`th meeting's `meeting.created` event, as recording takes it (`title` tells the tests' meetings apart). */
export function createdEvent(n: number, title: string): { meetingId: string; event: PublicEvent } {
  const meetingId = `mtg_${String(n).padStart(24, "0")}`;
  const event: PublicEvent = {
    id: `evt_${String(n).padStart(24, "0")}`,
    type: "meeting.created",
    createdAt: "2031-01-01T09:00:00Z",
    mode: "test",
    data: { object: { id: meetingId, title, description: "", startTime: "2031-01-01T10:00:00Z", duration: "30 mins", participants: ["a@example.com"], status: "confirmed", organizer: "o@example.com", createdAt: "2031-01-01T09:00:00Z", attendees: [], recurrence: null, seriesId: null, originalStartTime: null } },
  };
  return { meetingId, event };
}
