import type { PublicEvent } from "@sched/proto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A webhook receiver on loopback that answers 204 and keeps the ids of the events it got, in arrival order. */
export async function startEventReceiver(): Promise<{ url: string; received: string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push((JSON.parse(Buffer.concat(chunks).toString("utf8")) as PublicEvent).id);
      res.writeHead(204).end();
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
