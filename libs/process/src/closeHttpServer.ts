import type { Server } from "node:http";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Stops accepting connections and waits for the requests in progress; a
 * keep-alive connection is closed as soon as it is idle rather than when it
 * times out. What is still open at the deadline is cut.
 */
export async function closeHttpServer(server: Server, deadline: number): Promise<void> {
  let closed = false;
  server.close(() => (closed = true));
  while (!closed && Date.now() < deadline) {
    server.closeIdleConnections();
    await sleep(50);
  }
  server.closeAllConnections();
}
