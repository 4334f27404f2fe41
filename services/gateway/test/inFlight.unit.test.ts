import { thrown } from "@sched/testing";
import { describe, expect, it } from "vitest";
import { holderShare, Places } from "../src/inbound/http/inFlight.js";

describe("places in progress shared among clients", () => {
  it("gives one holder at most its share, never less than one place", () => {
    expect(holderShare(1_000, 25)).toBe(250);
    expect(holderShare(4, 50)).toBe(2);
    expect(holderShare(3, 10)).toBe(1);
    expect(holderShare(10, 100)).toBe(10);
  });

  it("refuses a holder past its share with 503 and Retry-After while others still get in", () => {
    const places = new Places(4, 50, "requests in progress");
    places.take(["address:a", "key:k"]);
    places.take(["address:b", "key:k"]);
    const byKey = thrown(() => places.take(["address:c", "key:k"]));
    expect(byKey.code).toBe("service_unavailable");
    expect(byKey.details.retryAfterSeconds).toBe(1);
    places.take(["address:a", "key:j"]);
    expect(thrown(() => places.take(["address:a", "key:i"])).code).toBe("service_unavailable");
    places.take(["address:c", "key:i"]);
    expect(places.inUse).toBe(4);
    expect(thrown(() => places.take(["address:d", "key:h"])).code).toBe("service_unavailable");
  });

  it("takes the place back once, however often it is given back", () => {
    const places = new Places(2, 50, "requests in progress");
    const giveBack = places.take(["address:a"]);
    expect(thrown(() => places.take(["address:a"])).code).toBe("service_unavailable");
    giveBack();
    giveBack();
    expect(places.inUse).toBe(0);
    places.take(["address:a"]);
    places.take(["address:b"]);
    expect(places.inUse).toBe(2);
  });
});
