import { headers as natsHeaders } from "@nats-io/nats-core";
import { JetStreamApiError, JetStreamError } from "@nats-io/jetstream";
import { expect, it } from "vitest";
import { checkPublishAck, EXPECTED_LAST_MSG_ID_HEADER, MSG_ID_HEADER, withPublishHeaders } from "../src/jetStreamPublish.js";

const answer = (value: unknown) => ({ data: new TextEncoder().encode(JSON.stringify(value)) });

it("accepts JetStream's answer that the event is stored, a duplicate included", () => {
  expect(() => checkPublishAck(answer({ stream: "t_MEETINGS", seq: 7 }))).not.toThrow();
  expect(() => checkPublishAck(answer({ stream: "t_MEETINGS", seq: 7, duplicate: true }))).not.toThrow();
});

it("refuses with the API's error, its code kept, an event JetStream did not store", () => {
  const refused = answer({ error: { code: 400, err_code: 10070, description: "wrong last msg ID: m-1" } });
  const thrown = (() => {
    try {
      checkPublishAck(refused);
      return undefined;
    } catch (err) {
      return err;
    }
  })();
  expect(thrown).toBeInstanceOf(JetStreamApiError);
  expect((thrown as JetStreamApiError).code).toBe(10070);
  expect((thrown as JetStreamApiError).message).toBe("wrong last msg ID: m-1");
});

it("refuses an answer that names no stream", () => {
  expect(() => checkPublishAck(answer({ seq: 1 }))).toThrow(JetStreamError);
  expect(() => checkPublishAck({ data: new TextEncoder().encode("not json") })).toThrow();
});

it("puts the msgId, and the event to follow when there is one, beside the headers already there", () => {
  const h = natsHeaders();
  h.set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  withPublishHeaders(h, "m-2", "m-1");
  expect(h.get(MSG_ID_HEADER)).toBe("m-2");
  expect(h.get(EXPECTED_LAST_MSG_ID_HEADER)).toBe("m-1");
  expect(h.get("traceparent")).toBe("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  const first = withPublishHeaders(natsHeaders(), "m-1", undefined);
  expect(first.get(MSG_ID_HEADER)).toBe("m-1");
  expect(first.has(EXPECTED_LAST_MSG_ID_HEADER)).toBe(false);
});
