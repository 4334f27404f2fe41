import { format as formatType, parse as parseType } from "content-type";
import express from "express";
import type { ServerResponse } from "node:http";

/*
 * Answers written on Node's own response, as express's `res.set`,
 * `res.json` and `res.send` write them, so that an API request answered
 * without express (app.ts, tracing off) and one answered through it
 * (tracing on) get the same bytes.
 */

/** What res.json() sends as the type, for bodies that arrive already encoded. */
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** express's `res.set` for one header (a Content-Type completed with its charset); it uses nothing of express's response but `setHeader`. */
const setOne = express.response.set as (this: ServerResponse, field: string, value: string) => unknown;

/** A service's reply headers, set as express's `res.set` sets them. */
export function setReplyHeaders(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  for (const name in headers) setOne.call(res, name, headers[name]!);
}

/**
 * Headers of plain string values, set as they are: express's `res.set` would
 * look each name over for a Content-Type to complete, and these have none.
 */
export function setHeaders(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  for (const name in headers) res.setHeader(name, headers[name]!);
}

/**
 * A body that arrives encoded, written as it came (the bytes as a Buffer
 * without copying them). What `res.send` would do beyond this does not apply:
 * no ETag is made, conditional requests were refused at the edge (so nothing
 * is fresh), and Node itself sends no body to a HEAD.
 */
export function sendEncoded(res: ServerResponse, status: number, encoded: string | Uint8Array): void {
  const body = typeof encoded === "string" ? encoded : Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  res.statusCode = status;
  res.setHeader("Content-Type", JSON_CONTENT_TYPE);
  res.setHeader("Content-Length", typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
  res.end(body);
}

/** `res.status(status).json(value)`: JSON text under the type already set (made UTF-8), else JSON's. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.statusCode = status;
  if (!res.getHeader("Content-Type")) res.setHeader("Content-Type", JSON_CONTENT_TYPE);
  sendText(res, JSON.stringify(value) as string | undefined);
}

/**
 * `res.send(text)` with a Content-Type already set (every caller sets one):
 * its charset made UTF-8, the length counted, no ETag (the app disables
 * them), no freshness (conditional requests are refused at the edge), and
 * the statuses that carry no body sent without one.
 */
export function sendText(res: ServerResponse, text: string | undefined): void {
  const type = res.getHeader("Content-Type");
  if (typeof type === "string") setOne.call(res, "Content-Type", withUtf8(type));
  let chunk = text;
  if (chunk !== undefined && !res.getHeader("Transfer-Encoding")) res.setHeader("Content-Length", String(Buffer.byteLength(chunk)));
  if (res.statusCode === 204 || res.statusCode === 304) {
    res.removeHeader("Content-Type");
    res.removeHeader("Content-Length");
    res.removeHeader("Transfer-Encoding");
    chunk = "";
  }
  if (res.statusCode === 205) {
    res.setHeader("Content-Length", "0");
    res.removeHeader("Transfer-Encoding");
    chunk = "";
  }
  if (res.req.method === "HEAD" || chunk === undefined) res.end();
  else res.end(chunk, "utf8");
}

/** The type with its charset parameter set to utf-8, as express's `setCharset` makes it. */
function withUtf8(type: string): string {
  const parsed = parseType(type);
  parsed.parameters.charset = "utf-8";
  return formatType(parsed);
}
