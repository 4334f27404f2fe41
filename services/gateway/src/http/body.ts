import { AppError } from "@sched/errors";
import express, { type Request, type Response } from "express";

const MAX_BODY = "100kb";
const jsonParser = express.json({ limit: MAX_BODY, strict: false, type: () => true });

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

/**
 * Reads a JSON body: 415 for another media type, 413 past 100 KiB, 400
 * invalid_json when it does not parse. No body at all reads as undefined.
 */
export async function readJsonBody(req: Request, res: Response): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  if (!isJson(req.headers["content-type"])) {
    throw new AppError("unsupported_media_type", "Request bodies must be JSON, sent with Content-Type: application/json.");
  }
  await new Promise<void>((resolve, reject) => {
    jsonParser(req, res, (err?: unknown) => (err ? reject(mapBodyError(err)) : resolve()));
  });
  return req.body;
}

function mapBodyError(err: unknown): AppError {
  const type = (err as { type?: string }).type;
  if (type === "entity.too.large") return new AppError("payload_too_large", "The request body is larger than 100 KiB.");
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return new AppError("unsupported_media_type", "Request bodies must be UTF-8 JSON.");
  }
  return new AppError("invalid_json", "The request body is not valid JSON.");
}
