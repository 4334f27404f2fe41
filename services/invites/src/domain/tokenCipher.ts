import { Sealer } from "@sched/ids";

/** Provider tokens as stored: what Google's token endpoint answered, kept up to date on refresh. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds; absent when unknown (the access token is then tried first). */
  expiresAt?: number;
}

/** A CalDAV account as stored: the password is an app password the user made for us. */
export interface CalDavCredentials {
  serverUrl: string;
  username: string;
  password: string;
}

/**
 * A connection's secrets sealed at rest (AES-256-GCM through the shared
 * Sealer): unreadable without CALENDAR_TOKEN_KEY, and bound to the
 * connection id, so a row's secrets pasted into another do not open.
 */
export class TokenCipher {
  private readonly sealer: Sealer;

  constructor(key: Buffer) {
    this.sealer = new Sealer(key, "the token key");
  }

  /** Seals a connection's secrets: OAuth tokens, or a CalDAV account's credentials. */
  seal(tokens: ProviderTokens | CalDavCredentials, connectionId: string): string {
    return this.sealer.seal(JSON.stringify(tokens), connectionId);
  }

  open<T extends ProviderTokens | CalDavCredentials = ProviderTokens>(sealed: string, connectionId: string): T {
    return JSON.parse(this.sealer.open(sealed, connectionId)) as T;
  }
}
