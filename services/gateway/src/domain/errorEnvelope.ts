import { errorDocUrl, type ErrorBody, type ErrorCode } from "@sched/proto";

/**
 * The one error envelope of the API (api-decisions part 1), wherever the
 * gateway answers with it: from the app, or straight on the socket for a
 * request Node refused before the app saw it.
 */
export function errorEnvelope(error: { code: ErrorCode; message: string; param?: string | undefined }, requestId: string, publicBaseUrl: string | undefined): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.param ? { param: error.param } : {}),
      requestId,
      docUrl: errorDocUrl(error.code, publicBaseUrl),
    },
  };
}
