import { headers as natsHeaders, type MsgHdrs } from "@nats-io/nats-core";
import { HTTP_REPLY_HEADER } from "./httpReply.js";

/**
 * The NATS headers carrying an HTTP route's reply head (its status and
 * headers, see httpReply.ts). A head with a status alone (`{"status":200}`,
 * nearly every reply) is the same text every time: its headers are made and
 * encoded once, and every such reply hands the client the same bytes, where
 * each reply built a header map, checked and encoded it anew. A head with
 * headers of its own (a Location naming a new id) is made for its reply.
 */
export function replyHeadHeaders(head: string, statusOnly: boolean): MsgHdrs {
  if (!statusOnly) return headersOf(head);
  let shared = statusHeads.get(head);
  if (!shared) {
    shared = encodedOnce(headersOf(head));
    statusHeads.set(head, shared);
  }
  return shared;
}

/** By head text; as many as the statuses routes answer with. */
const statusHeads = new Map<string, MsgHdrs>();

function headersOf(head: string): MsgHdrs {
  const h = natsHeaders();
  h.set(HTTP_REPLY_HEADER, head);
  return h;
}

/** What the client calls on a message's headers each time it publishes one (MsgHdrsImpl's, not in the MsgHdrs type). */
type WireHeaders = MsgHdrs & { encode(): Uint8Array };

/** The headers with their wire form kept: the client asks for it on every publish, and nothing changes them once shared. */
function encodedOnce(h: MsgHdrs): MsgHdrs {
  const wire = (h as WireHeaders).encode();
  (h as WireHeaders).encode = () => wire;
  return h;
}
