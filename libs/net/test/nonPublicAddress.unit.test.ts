import { describe, expect, it } from "vitest";
import { isNonPublicAddress } from "../src/index.js";

describe("addresses that are not the public internet", () => {
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
    "127.9.9.9",
    "10.1.2.3",
    "192.168.1.1",
    "100.64.0.1",
    "fd00::1",
    "::ffff:10.0.0.1",
    "not-an-ip",
    "not an address",
  ])("counts %s as not public", (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(["93.184.215.14", "8.8.8.8", "172.32.0.1", "192.169.0.1", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "::ffff:8.8.8.8", "93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"])("counts %s as public", (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});
