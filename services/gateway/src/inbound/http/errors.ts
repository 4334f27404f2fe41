import { AppError, internalError } from "@sched/errors";
import type { Logger } from "@sched/logging";
import type { NextFunction, Request, Response } from "express";
import type { ServerResponse } from "node:http";
import { errorEnvelope } from "../../domain/errorEnvelope.js";
import { sendJson } from "./reply.js";
import { known } from "./requestFacts.js";

/** Writes the one error envelope of the API; `publicBaseUrl` is where its `docUrl` points, when the deployment says. */
function sendError(res: ServerResponse, err: AppError, publicBaseUrl: string | undefined): void {
  const requestId = known(res).requestId ?? "";
  if (err.details.allow) res.setHeader("Allow", err.details.allow.join(", "));
  if (err.details.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(err.details.retryAfterSeconds));
  else if (err.code === "service_unavailable") res.setHeader("Retry-After", "1");
  // A type a service's reply set before its body failed to be written is not the envelope's (and may be what failed).
  res.removeHeader("Content-Type");
  sendJson(res, err.status, errorEnvelope({ code: err.code, message: err.message, param: err.details.param }, requestId, publicBaseUrl));
}

/** Answers anything thrown with the envelope; unknown errors are logged and hidden. */
export function errorAnswer(logger: Logger, publicBaseUrl?: string): (err: unknown, res: ServerResponse) => void {
  return (err, res) => {
    if (res.headersSent) return;
    if (err instanceof AppError) return sendError(res, err, publicBaseUrl);
    logger.error({ err, requestId: known(res).requestId }, "unhandled gateway error");
    sendError(res, internalError(), publicBaseUrl);
  };
}

/** Last middleware of the express app: the same answer. */
export function errorMiddleware(logger: Logger, publicBaseUrl?: string) {
  const answer = errorAnswer(logger, publicBaseUrl);
  return (err: unknown, _req: Request, res: Response, _next: NextFunction): void => answer(err, res);
}
