import { AppError, paramName } from "@sched/errors";
import express, { type Request, type Response } from "express";
import { isUtf8 } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import { finished } from "node:stream";
import getRawBody from "raw-body";
import { jsonTextShape, nonFiniteNumberAt, type JsonTextShape } from "../../domain/jsonShape.js";

/** 100 KiB, as express.json's "100kb". */
const MAX_BODY_BYTES = 100 * 1024;

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  if (length !== undefined) return length !== "0";
  return req.headers["transfer-encoding"] !== undefined;
}

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const [type, ...params] = contentType.split(";").map((p) => p.trim().toLowerCase());
  if (type !== "application/json") return false;
  const charset = params.find((p) => p.startsWith("charset="));
  return !charset || /^charset="?utf-8"?$/.test(charset);
}

/** A body sent as it is, not compressed: the common case, read here without express's parser. */
function isIdentity(req: IncomingMessage): boolean {
  const encoding = req.headers["content-encoding"];
  return encoding === undefined || encoding.toLowerCase() === "identity";
}

export type JsonBodyReader = (req: IncomingMessage, res: ServerResponse) => Promise<unknown>;

const tooLarge = () => new AppError("payload_too_large", "The request body is larger than 100 KiB.");
const notJson = () => new AppError("invalid_json", "The request body is not valid JSON.");

/**
 * Reads a JSON body: 415 for another media type, 413 past 100 KiB, 400
 * invalid_json when it is not UTF-8, does not parse or nests arrays and objects deeper
 * than `maxDepth` (checked on the bytes, before parsing), 400
 * invalid_request naming the field when a number is not finite (`1e309`;
 * the parsed value is walked for one only when the bytes hold a number that
 * could be). No body at all reads as undefined, an empty one as `{}`. A body sent as
 * it is, the usual case, is read as bytes and parsed once here; a
 * compressed one (gzip, deflate, br) goes through express's parser, which
 * inflates it.
 */
export function jsonBodyReader(maxDepth: number): JsonBodyReader {
  const checkBytes = (bytes: Uint8Array): JsonTextShape => {
    // Decoding would turn bytes that are not UTF-8 (an encoded surrogate, say) into U+FFFD and store that.
    if (!isUtf8(bytes)) throw new AppError("invalid_json", "The request body is not valid UTF-8.");
    const shape = jsonTextShape(bytes, maxDepth);
    if (shape.nestsTooDeep) {
      throw new AppError("invalid_json", `The request body nests arrays and objects more than ${maxDepth} levels deep.`);
    }
    return shape;
  };
  const compressedParser = express.json({
    limit: MAX_BODY_BYTES,
    strict: false,
    type: () => true,
    verify: (_req, _res, bytes) => void checkBytes(bytes),
  });
  // The parser reads and sets only what Node's request has (its headers, its stream) and the `body` it adds.
  const readCompressed = (req: IncomingMessage, res: ServerResponse) =>
    new Promise<unknown>((resolve, reject) => {
      compressedParser(req as Request, res as Response, (err?: unknown) => (err ? reject(mapBodyError(err)) : resolve((req as Request).body)));
    });
  return async (req, res) => {
    if (!hasBody(req)) return undefined;
    if (!isJson(req.headers["content-type"])) {
      throw new AppError("unsupported_media_type", "Request bodies must be JSON, sent with Content-Type: application/json.");
    }
    let body: unknown;
    // An inflated body's bytes stay inside express's parser: its parsed value is always walked.
    let mayHoldNonFiniteNumber = true;
    if (isIdentity(req)) {
      const bytes = bodyAlreadyIn(req, MAX_BODY_BYTES) ?? (await readBytes(req, MAX_BODY_BYTES));
      mayHoldNonFiniteNumber = checkBytes(bytes).mayHoldNonFiniteNumber;
      body = parseJson(bytes);
    } else body = await readCompressed(req, res);
    const nonFinite = mayHoldNonFiniteNumber ? nonFiniteNumberAt(body) : undefined;
    if (nonFinite) {
      const param = paramName(nonFinite) || "body";
      throw new AppError("invalid_request", `${param} must be a finite number.`, { param });
    }
    return body;
  };
}

/**
 * The body of a request Node has already read in full, the usual case (it
 * came in the packets of its headers, and the gateway's checks before it
 * took a turn or more): taken off the request's stream at once, without the
 * listeners, the flowing stream and the turns of raw-body's reading.
 * Undefined while it is still arriving, or when it is past `limit` (the
 * refusal is readBytes's).
 */
function bodyAlreadyIn(req: IncomingMessage, limit: number): Buffer | undefined {
  if (!req.complete || req.readableLength > limit || req.readableFlowing !== null) return undefined;
  // In paused mode a read without a size hands over everything buffered, as one Buffer; nothing buffered (an empty chunked body) is null.
  return (req.read() as Buffer | null) ?? Buffer.alloc(0);
}

/**
 * The request's body as bytes, at most `limit` of them (413 past it, before
 * reading when Content-Length says so). On a refusal the rest of the body is
 * read off and dropped before the answer, as express's parser does, so the
 * connection stays usable.
 */
function readBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    getRawBody(req, { length: req.headers["content-length"] ?? null, limit }, (err, bytes) => {
      if (!err) return resolve(bytes);
      req.resume();
      finished(req, () => reject(mapBodyError(err)));
    });
  });
}

/** JSON text checked as UTF-8; a leading byte order mark is dropped, and empty text reads as `{}` (a common client mistake). */
function parseJson(bytes: Buffer): unknown {
  let text = bytes.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw notJson();
  }
}

function mapBodyError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const type = (err as { type?: string }).type;
  if (type === "entity.too.large") return tooLarge();
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return new AppError("unsupported_media_type", "Request bodies must be UTF-8 JSON.");
  }
  return notJson();
}
