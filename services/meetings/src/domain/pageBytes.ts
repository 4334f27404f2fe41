/**
 * Room a list reply keeps beside its items: the page's envelope
 * (`{"data":[…],"hasMore":false}`) and the message's headers (status, trace
 * context, the bus's own).
 */
export const REPLY_HEADROOM_BYTES = 16 * 1024;

/**
 * The most bytes of list items (UTF-8, one separator each) a page may carry so
 * that its reply fits one bus message of `maxMessageBytes`; undefined when the
 * bus sets no limit. A page still holds its first item whatever the budget:
 * one item is at most about 30 KB (100 addresses of 254 characters), far
 * below any workable limit, and a page of none could never continue.
 */
export function pageItemBudget(maxMessageBytes: number | undefined): number | undefined {
  return maxMessageBytes === undefined ? undefined : Math.max(0, maxMessageBytes - REPLY_HEADROOM_BYTES);
}
