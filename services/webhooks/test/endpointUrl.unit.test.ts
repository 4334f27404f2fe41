import { describe, expect, it } from "vitest";
import { addressesRefusal, urlRefusal } from "../src/domain/endpointUrl.js";

describe("endpoint URLs", () => {
  const url = (text: string) => new URL(text);

  it("wants https for live endpoints, and either for test ones", () => {
    expect(urlRefusal(url("http://example.com/hook"), "live", false)).toMatch(/https/);
    expect(urlRefusal(url("https://example.com/hook"), "live", false)).toBeNull();
    expect(urlRefusal(url("http://example.com/hook"), "test", false)).toBeNull();
  });

  it("refuses credentials in the URL", () => {
    expect(urlRefusal(url("https://user:pw@example.com/hook"), "test", false)).toMatch(/password/);
  });

  it("refuses private address literals unless private addresses are allowed", () => {
    expect(urlRefusal(url("http://127.0.0.1:8150/"), "test", false)).toMatch(/private/);
    expect(urlRefusal(url("http://[::1]:8150/"), "test", false)).toMatch(/private/);
    expect(urlRefusal(url("http://127.0.0.1:8150/"), "test", true)).toBeNull();
    expect(urlRefusal(url("http://127.0.0.1:8150/"), "live", true)).toMatch(/https/);
  });

  it("refuses a resolved name when any of its addresses is forbidden", () => {
    expect(addressesRefusal(["93.184.215.14", "10.0.0.5"], false)).toMatch(/resolves/);
    expect(addressesRefusal(["93.184.215.14"], false)).toBeNull();
    expect(addressesRefusal(["10.0.0.5"], true)).toBeNull();
  });
});
