import { AppError, internalError } from "@sched/errors";
import type { Logger } from "@sched/logging";
import type { NextFunction, Request, Response } from "express";
import { errorEnvelope } from "../../domain/errorEnvelope.js";
import { known } from "./requestFacts.js";

/** Writes the one error envelope of the API; `publicBaseUrl` is where its `docUrl` points, when the deployment says. */
function sendError(res: Response, err: AppError, publicBaseUrl: string | undefined): void {
  const requestId = known(res).requestId ?? "";
  if (err.details.allow) res.set("Allow", err.details.allow.join(", "));
  if (err.details.retryAfterSeconds !== undefined) res.set("Retry-After", String(err.details.retryAfterSeconds));
  else if (err.code === "service_unavailable") res.set("Retry-After", "1");
  res.status(err.status).json(errorEnvelope({ code: err.code, message: err.message, param: err.details.param }, requestId, publicBaseUrl));
}

/** Last middleware: anything thrown becomes the envelope; unknown errors are logged and hidden. */
export function errorMiddleware(logger: Logger, publicBaseUrl?: string) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return;
    if (err instanceof AppError) return sendError(res, err, publicBaseUrl);
    logger.error({ err, requestId: known(res).requestId }, "unhandled gateway error");
    sendError(res, internalError(), publicBaseUrl);
  };
}
