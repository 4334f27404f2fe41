import { connect } from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  // The body is JSON of any shape; tests assert on it.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

/**
 * Sends bytes exactly as given over a fresh connection and reads the answer
 * until the server closes it: what a misbehaving client sends, no HTTP
 * client library in the way. Rejects if no complete answer comes in time.
 */
export function rawRequest(url: string, request: string | Buffer, options: { timeoutMs?: number; keepOpen?: boolean } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${options.timeoutMs ?? 10_000} ms`));
    }, options.timeoutMs ?? 10_000);
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      // An interim answer (100 Continue to an Expect) comes before the final one.
      const raw = Buffer.concat(chunks).toString("utf8").replace(/^(HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, "");
      const split = raw.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error(`connection closed without an answer: ${JSON.stringify(raw.slice(0, 200))}`));
      const [statusLine, ...lines] = raw.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(":");
        headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      const text = raw.slice(split + 4);
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      resolve({ status: Number(statusLine!.split(" ")[1]), headers, body, text });
    });
    socket.write(request);
    // Half-close so the server knows no more is coming, unless the test plays a slow client.
    if (!options.keepOpen) socket.end();
  });
}
