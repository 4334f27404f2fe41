/**
 * The list's answer around a page's items, `{"data":[…],"hasMore":…}`, in
 * its parts: Postgres writes a page without recurring meetings this way
 * itself (db/queries.ts besidePage), the service writes a merged page so.
 */
export const LIST_ANSWER = { head: '{"data":', beforeHasMore: ',"hasMore":', tail: "}" } as const;

/** The answer of a page whose items are the JSON array `itemsJson`. */
export const listAnswer = (itemsJson: string, hasMore: boolean): string => `${LIST_ANSWER.head}${itemsJson}${LIST_ANSWER.beforeHasMore}${hasMore}${LIST_ANSWER.tail}`;

/** The items' JSON array of an answer listAnswer's shape. */
export const itemsOfListAnswer = (answer: string): string => answer.slice(LIST_ANSWER.head.length, answer.lastIndexOf(LIST_ANSWER.beforeHasMore));
