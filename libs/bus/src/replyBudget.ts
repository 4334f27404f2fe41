/**
 * Room a reply keeps beside the body a service sizes: the message's headers
 * (status, trace context, the bus's own) and the few bytes around a list
 * (`{"data":[…],"hasMore":false}`).
 */
export const REPLY_HEADROOM_BYTES = 16 * 1024;

/**
 * The most bytes of JSON a reply's body may take so that the reply fits one
 * bus message of `maxMessageBytes`; undefined when the bus sets no limit. A
 * service whose answer could grow past it gives less (a shorter page, fewer
 * suggestions), never nothing: one item of any answer is far below any
 * workable limit.
 */
export function replyBodyBudget(maxMessageBytes: number | undefined): number | undefined {
  return maxMessageBytes === undefined ? undefined : Math.max(0, maxMessageBytes - REPLY_HEADROOM_BYTES);
}
