/** A generated request on the wire, and as a reader sees it in a report. */
import type { FuzzRequest } from "./requests.js";

/** What is odd about a request, most telling first, by what it contains: failures of one class usually share a cause. */
const TRAITS: Array<[string, (r: FuzzRequest, text: string) => boolean]> = [
  ["no Host", (r) => !r.headers.some(([n]) => n === "Host")],
  ["deep nesting", (_, text) => /\[{20}|(\{"a":){20}/.test(text)],
  ["1e309", (_, text) => /[:[,]\s*-?1e309/.test(text)],
  ["NUL", (_, text) => /\\u0000|%00/.test(text) || text.includes("\u0000")],
  ["unpaired surrogate", (_, text) => /\\ud[89a-f][0-9a-f]{2}|%ED%[AB]|\ufffd/i.test(text)],
  ["year 0000 or 9999", (_, text) => /\b(0000|9999)-\d\d|\b10000-/.test(text)],
  ["broken escape", (r) => /%(?![0-9A-Fa-f]{2})|%E0%A4%A(?![0-9A-F])/.test(r.target)],
  ["Content-Encoding", (r) => r.headers.some(([n]) => n === "Content-Encoding")],
  ["If-None-Match", (r) => r.headers.some(([n]) => n === "If-None-Match")],
];

/** The most telling odd thing about a request, if any. */
export function traitOf(request: FuzzRequest): string | undefined {
  const text = `${request.target}\n${request.body?.toString("utf8") ?? ""}`;
  return TRAITS.find(([, test]) => test(request, text))?.[0];
}

/** The request on the wire. */
export function serialize(request: FuzzRequest): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, ...request.headers.map(([name, value]) => `${name}: ${value}`)];
  let body = request.body ?? Buffer.alloc(0);
  if (request.body !== undefined) {
    if (request.chunked) {
      lines.push("Transfer-Encoding: chunked");
      const half = Math.floor(body.length / 2);
      const chunks = [body.subarray(0, half), body.subarray(half)].filter((c) => c.length > 0);
      body = Buffer.concat([...chunks.flatMap((c) => [Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from("\r\n")]), Buffer.from("0\r\n\r\n")]);
    } else lines.push(`Content-Length: ${body.length}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "utf8"), body]);
}

/** The request as a reader can reproduce it: long runs shortened, everything else verbatim (escaped). */
export function describeRequest(request: FuzzRequest): string {
  const head = [`${request.method} ${request.target} HTTP/1.1`, ...request.headers.map(([n, v]) => `${n}: ${v}`)];
  if (request.body !== undefined) head.push(request.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${request.body.length}`);
  const body = request.body === undefined ? "" : `\n\n${request.body.toString("utf8")}`;
  return JSON.stringify(shorten(`${head.join("\n")}${body}`, 3_000));
}

/** Long runs of one character (or of `{"a":`) written as a count, and the whole cut at `max` characters. */
export function shorten(text: string, max: number): string {
  const short = text.replace(/(.)\1{31,}/gsu, (run, c: string) => `${c.repeat(4)}…(${c} ×${[...run].length})`).replace(/(\{"a":){8,}/g, (run) => `{"a":…(×${run.length / 5})`);
  return short.length > max ? `${short.slice(0, max)}…` : short;
}
