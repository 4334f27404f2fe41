import type { Msg, MsgHdrs } from "@nats-io/nats-core";
import { JetStreamApiError, JetStreamError, type ApiError } from "@nats-io/jetstream";

/** The header JetStream de-duplicates a publish by, within the stream's duplicate window. */
export const MSG_ID_HEADER = "Nats-Msg-Id";
/** The header that has JetStream store a publish only right after the event with this msgId. */
export const EXPECTED_LAST_MSG_ID_HEADER = "Nats-Expected-Last-Msg-Id";

/** How long a publish, or an acknowledgement to be confirmed, waits for JetStream's answer: the client's own default. */
export const JETSTREAM_ANSWER_TIMEOUT_MS = 5_000;

/** A delivered event's acknowledgement, as the client sends it. */
export const ACK = "+ACK";

/** Adds what JetStream reads of a publish (its msgId, and the event it must follow) to the headers it is sent with. */
export function withPublishHeaders(h: MsgHdrs, msgId: string, after: string | undefined): MsgHdrs {
  h.set(MSG_ID_HEADER, msgId);
  if (after !== undefined) h.set(EXPECTED_LAST_MSG_ID_HEADER, after);
  return h;
}

/**
 * Reads JetStream's answer to a publish as the client's own `publish` does:
 * stored, or refused with the API's error (its `err_code` says why). Read
 * here rather than by the client's publish, whose request builds a time-out,
 * an answer object and, on every success, a "cancelled" error with its stack.
 */
export function checkPublishAck(answer: Pick<Msg, "data">): void {
  const ack = JSON.parse(textDecoder.decode(answer.data)) as { error?: ApiError; stream?: string };
  if (ack.error) throw new JetStreamApiError(ack.error);
  if (!ack.stream) throw new JetStreamError("invalid ack response");
}

const textDecoder = new TextDecoder();
