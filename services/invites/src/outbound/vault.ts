import type { Knex } from "@sched/db";
import type { Logger } from "@sched/logging";
import { type ConnectionRecord, markBroken, updateSealedTokens } from "../db/queries.js";
import type { CalDavCredentials, ProviderTokens, TokenCipher } from "../domain/tokenCipher.js";
import { CalDavAccount } from "./caldav.js";
import type { GoogleCalendar, GoogleSession } from "./google.js";
import type { MicrosoftCalendar, MicrosoftSession } from "./microsoft.js";

/**
 * Opens stored grants for use: unseals the tokens, and seals refreshed ones
 * back as soon as Google or Microsoft hands them out, so a refresh is never
 * lost (both may rotate the refresh token too).
 */
export class ConnectionVault {
  constructor(
    private readonly db: Knex,
    private readonly cipher: TokenCipher,
    private readonly google: GoogleCalendar,
    private readonly logger: Logger,
    /** Whether CalDAV servers may be on loopback or private addresses (development and tests only). */
    private readonly caldavAllowPrivate = false,
    private readonly microsoftCalendar?: MicrosoftCalendar,
  ) {}

  get tokenCipher(): TokenCipher {
    return this.cipher;
  }

  session(connection: ConnectionRecord): GoogleSession {
    return this.google.session(this.cipher.open(connection.sealedTokens, connection.id), (fresh) => this.storeRefreshed(connection, fresh));
  }

  /** Graph on a Microsoft connection's tokens. */
  microsoft(connection: ConnectionRecord): MicrosoftSession {
    if (!this.microsoftCalendar) throw new Error("Microsoft Graph is not set up in this service");
    return this.microsoftCalendar.session(this.cipher.open(connection.sealedTokens, connection.id), (fresh) => this.storeRefreshed(connection, fresh));
  }

  private storeRefreshed(connection: ConnectionRecord, fresh: ProviderTokens): void {
    void updateSealedTokens(this.db, connection.id, this.cipher.seal(fresh, connection.id)).catch((err: unknown) => {
      this.logger.warn({ err, connectionId: connection.id }, "refreshed calendar tokens could not be stored; the next use refreshes again");
    });
  }

  /** A CalDAV connection's account, logged in. */
  caldav(connection: ConnectionRecord, timeoutMs: number, signal?: AbortSignal): Promise<CalDavAccount> {
    return this.openCalDav(this.cipher.open<CalDavCredentials>(connection.sealedTokens, connection.id), timeoutMs, signal);
  }

  /** A CalDAV account, logged in: how a connection is checked before it is kept. */
  openCalDav(credentials: CalDavCredentials, timeoutMs: number, signal?: AbortSignal): Promise<CalDavAccount> {
    return CalDavAccount.open(credentials, { timeoutMs, allowPrivate: this.caldavAllowPrivate, signal });
  }

  /** The grant is gone for good (revoked, expired): invites go by e-mail until the user connects again. */
  async markBroken(connection: ConnectionRecord, reason: string): Promise<void> {
    this.logger.warn({ connectionId: connection.id, userId: connection.userId, reason }, "calendar connection broken; falling back to e-mail");
    await markBroken(this.db, connection.id);
  }
}
