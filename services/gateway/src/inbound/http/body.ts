import { AppError, paramName } from "@sched/errors";
import express, { type Request, type Response } from "express";
import { isUtf8 } from "node:buffer";
import { nestsDeeperThan, nonFiniteNumberAt } from "../../domain/jsonShape.js";

const MAX_BODY = "100kb";

function hasBody(req: Request): boolean {
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

export type JsonBodyReader = (req: Request, res: Response) => Promise<unknown>;

/**
 * Reads a JSON body: 415 for another media type, 413 past 100 KiB, 400
 * invalid_json when it is not UTF-8, does not parse or nests arrays and objects deeper
 * than `maxDepth` (checked on the bytes, before parsing), 400
 * invalid_request naming the field when a number is not finite (`1e309`).
 * No body at all reads as undefined.
 */
export function jsonBodyReader(maxDepth: number): JsonBodyReader {
  const jsonParser = express.json({
    limit: MAX_BODY,
    strict: false,
    type: () => true,
    verify: (_req, _res, bytes) => {
      // Decoding would turn bytes that are not UTF-8 (an encoded surrogate, say) into U+FFFD and store that.
      if (!isUtf8(bytes)) throw new AppError("invalid_json", "The request body is not valid UTF-8.");
      if (nestsDeeperThan(bytes, maxDepth)) {
        throw new AppError("invalid_json", `The request body nests arrays and objects more than ${maxDepth} levels deep.`);
      }
    },
  });
  return async (req, res) => {
    if (!hasBody(req)) return undefined;
    if (!isJson(req.headers["content-type"])) {
      throw new AppError("unsupported_media_type", "Request bodies must be JSON, sent with Content-Type: application/json.");
    }
    await new Promise<void>((resolve, reject) => {
      jsonParser(req, res, (err?: unknown) => (err ? reject(mapBodyError(err)) : resolve()));
    });
    const body: unknown = req.body;
    const nonFinite = nonFiniteNumberAt(body);
    if (nonFinite) {
      const param = paramName(nonFinite) || "body";
      throw new AppError("invalid_request", `${param} must be a finite number.`, { param });
    }
    return body;
  };
}

function mapBodyError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const type = (err as { type?: string }).type;
  if (type === "entity.too.large") return new AppError("payload_too_large", "The request body is larger than 100 KiB.");
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return new AppError("unsupported_media_type", "Request bodies must be UTF-8 JSON.");
  }
  return new AppError("invalid_json", "The request body is not valid JSON.");
}
