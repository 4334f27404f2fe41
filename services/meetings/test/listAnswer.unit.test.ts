import { expect, it } from "vitest";
import { itemsOfListAnswer, listAnswer } from "../src/domain/listAnswer.js";

it("writes a page's answer as JSON around its items, and reads the items back out of it, whatever they hold", () => {
  const items = [{ id: "mtg_1", title: 'a "hasMore": title,"hasMore":' }, { id: "mtg_2", title: "}" }];
  for (const hasMore of [true, false]) {
    const answer = listAnswer(JSON.stringify(items), hasMore);
    expect(JSON.parse(answer)).toEqual({ data: items, hasMore });
    expect(JSON.parse(itemsOfListAnswer(answer))).toEqual(items);
  }
  expect(itemsOfListAnswer(listAnswer("[]", false))).toBe("[]");
});
