import { Sealer } from "@sched/ids";

/**
 * Seals signing secrets at rest with AES-256-GCM, as calendar tokens are
 * sealed: the endpoint id is bound in, so a sealed secret copied to another
 * endpoint's row does not open.
 */
export class SecretCipher {
  private readonly sealer: Sealer;

  constructor(key: Buffer) {
    this.sealer = new Sealer(key, "the webhook secret key");
  }

  seal(secret: string, endpointId: string): string {
    return this.sealer.seal(secret, endpointId);
  }

  open(sealed: string, endpointId: string): string {
    return this.sealer.open(sealed, endpointId);
  }
}
