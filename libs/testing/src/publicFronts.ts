/**
 * The https addresses a fake provider delivers notifications to, as the
 * TLS fronts of deployments would serve them: a test says which loopback
 * server stands behind each public base, and an address under it is sent
 * there (any other is sent as it is).
 */
export class PublicFronts {
  private readonly fronts = new Map<string, string>();

  /** Notifications to addresses under `publicBase` go to `actual`, the same path under it. */
  set(publicBase: string, actual: string): void {
    this.fronts.set(publicBase.replace(/\/+$/, ""), actual.replace(/\/+$/, ""));
  }

  resolve(address: string): string {
    for (const [base, actual] of this.fronts) if (address === base || address.startsWith(`${base}/`) || address.startsWith(`${base}?`)) return actual + address.slice(base.length);
    return address;
  }
}
