import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** How long the "slow" behaviour takes to answer: past any deadline a test gives the model. */
export const SLOW_ANSWER_MS = 10_000;

export type Behaviour = "good" | "slow" | "malformed" | "unknown-slots" | "429" | "500";

interface SummaryShape {
  slots: Array<{ id: string }>;
}

/**
 * An OpenAI-compatible chat completions server on loopback, for the real
 * `openai` client: POST /v1/chat/completions answers as `behaviour` says and
 * keeps every request body it received.
 */
export class FakeOpenAI {
  behaviour: Behaviour = "good";
  readonly bodies: string[] = [];
  private server!: Server;

  get baseURL(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void read(req).then(async (body) => {
        this.bodies.push(body);
        if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
          res.writeHead(404).end();
          return;
        }
        const json = (status: number, value: unknown) => {
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
        };
        switch (this.behaviour) {
          case "429":
            return json(429, { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } });
          case "500":
            return json(500, { error: { message: "The server had an error", type: "server_error" } });
          case "slow":
            await new Promise((resolve) => setTimeout(resolve, SLOW_ANSWER_MS));
            return res.destroyed ? undefined : json(200, completion(answerFor(body, "good")));
          default:
            return json(200, completion(answerFor(body, this.behaviour)));
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => resolve(body));
  });
}

/** The content the model "writes": the slots it was shown in reverse order, or something broken. */
function answerFor(requestBody: string, behaviour: Behaviour): string {
  if (behaviour === "malformed") return '{"ranking": [{"slot": "S1", "score": 0.9, "reason": "cut off';
  const request = JSON.parse(requestBody) as { messages: Array<{ role: string; content: string }> };
  const summary = JSON.parse(request.messages.find((m) => m.role === "user")!.content) as SummaryShape;
  const ids = summary.slots.map((s) => s.id).reverse();
  if (behaviour === "unknown-slots") ids[0] = "S99";
  return JSON.stringify({
    ranking: ids.map((slot, i) => ({ slot, score: Math.max(0, 0.95 - i * 0.1), reason: `The model prefers this for P1 and P2 (${slot}).` })),
  });
}

function completion(content: string) {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: "fake-model",
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop", logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}
