import { describe, expect, it } from "vitest";
import { isForbiddenAddress } from "../src/domain/addresses.js";
import { addressesRefusal, urlRefusal } from "../src/domain/endpointUrl.js";

describe("forbidden addresses", () => {
  it.each([
    "127.0.0.1",
    "127.8.9.10",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.0.10",
    "169.254.169.254",
    "100.100.100.200",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00:ec2::254",
    "fc00::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:a9fe:a9fe",
    "[::1]",
    "not an address",
  ])("refuses %s", (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(["93.184.215.14", "8.8.8.8", "172.32.0.1", "192.169.0.1", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "::ffff:8.8.8.8"])("allows %s", (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

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
