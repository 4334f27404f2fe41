import { Sealer } from "@sched/ids";

/** Provider tokens as stored: what Google's token endpoint answered, kept up to date on refresh. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds; absent when unknown (the access token is then tried first). */
  expiresAt?: number;
}

/**
 * AES-256-GCM with a fresh 96-bit nonce per sealing: tokens at rest are
 * unreadable without the key, and any change to a stored value (or a row's
 * tokens pasted into another) fails to open, because the connection id is
 * bound in as associated data.
 */
export class TokenCipher {
  private readonly sealer: Sealer;

  constructor(key: Buffer) {
    this.sealer = new Sealer(key, "the token key");
  }

  seal(tokens: ProviderTokens, connectionId: string): string {
    return this.sealer.seal(JSON.stringify(tokens), connectionId);
  }

  open(sealed: string, connectionId: string): ProviderTokens {
    return JSON.parse(this.sealer.open(sealed, connectionId)) as ProviderTokens;
  }
}
