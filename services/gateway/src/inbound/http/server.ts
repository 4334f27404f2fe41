import { ERROR_STATUS, type ErrorCode } from "@sched/proto";
import { createServer, STATUS_CODES, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { errorEnvelope } from "../../domain/errorEnvelope.js";
import { chooseRequestId } from "../../domain/requestId.js";
import { timeOut } from "./handover.js";

/** What one client may send and how slowly, before the edge refuses it. */
export interface EdgeLimits {
  /** Request line and headers together. */
  maxHeaderBytes: number;
  /** Time to receive the headers. */
  headersTimeoutMs: number;
  /** Time to receive the whole request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
}

/** What the express app checks (see app.ts's edge settings). */
export interface RequestLimits {
  /** Longest URL (414 past it). */
  maxUrlBytes: number;
  /** Requests in progress at once (503 past it), and bodies being received at once. */
  maxInFlight: number;
  /** The share of those one client address or one API key may hold, in percent (503 past it). */
  inFlightSharePercent: number;
  /** Deepest nesting of arrays and objects in a JSON body (400 past it). */
  maxJsonDepth: number;
}

/**
 * The gateway's HTTP server. Requests Node refuses before express sees them
 * (headers too large, too slow, not HTTP) still get the error envelope, so a
 * client never has to parse anything else.
 */
export function createGatewayServer(handler: RequestListener, limits: EdgeLimits, publicBaseUrl?: string): Server {
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two time-outs on this beat; the default 30 s would let a slow client stay far longer.
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
      // Node would answer a missing Host with a bare 400; the app refuses it with the envelope.
      requireHostHeader: false,
    },
    handler,
  );
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way on this connection (an error in the body after the answer began) cannot be followed by another.
    const answering = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (err.code === "ECONNRESET" || !socket.writable || answering?.headersSent) {
      socket.destroy();
      return;
    }
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT" && answering && !timeOut(answering)) {
      // Handed on to a service already: the client gets its answer, then the connection closes.
      answering.shouldKeepAlive = false;
      return;
    }
    socket.end(rawErrorResponse(clientErrorCode(err.code), publicBaseUrl));
  });
  // Node answers an unknown Expect with a bare 417; the request is served as if it were not there.
  server.on("checkExpectation", handler);
  // Node would drop a CONNECT without a word; this API tunnels nothing.
  server.on("connect", (_req, socket: Duplex) => {
    socket.end(rawErrorResponse("method_not_allowed", publicBaseUrl));
  });
  return server;
}

function clientErrorCode(nodeCode: string | undefined): ErrorCode {
  if (nodeCode === "HPE_HEADER_OVERFLOW") return "headers_too_large";
  if (nodeCode === "ERR_HTTP_REQUEST_TIMEOUT" || nodeCode === "HPE_HEADERS_TIMEOUT") return "request_timeout";
  return "invalid_request";
}

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  headers_too_large: "The request headers are too large.",
  request_timeout: "The request was not received in time.",
  invalid_request: "The request is not valid HTTP.",
  method_not_allowed: "CONNECT is not allowed.",
};

/** A whole HTTP/1.1 response written straight to the socket; the connection closes after it. */
function rawErrorResponse(code: ErrorCode, publicBaseUrl: string | undefined): string {
  const status = ERROR_STATUS[code];
  const requestId = chooseRequestId(undefined);
  const body = JSON.stringify(errorEnvelope({ code, message: MESSAGES[code] ?? code }, requestId, publicBaseUrl));
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`,
    "Content-Type: application/json; charset=utf-8",
    `X-Request-Id: ${requestId}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}
