import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/** 128 bits as lower-case hex: unguessable, and safe in a mailbox name that some mail systems lower-case. */
const TOKEN_HEX = 32;
const LOCAL_PART = /^reply-([0-9a-f]{32})$/;

/**
 * The reply addresses of e-mail invites. Each participant of each meeting
 * gets their own, `reply-<token>@<inbound domain>`, the token an HMAC of the
 * meeting and the participant: nothing is stored, and a reply is believed
 * only for the one participant and meeting its address was made for, so a
 * forger must have received that very invite.
 */
export class ReplyAddresses {
  private readonly key: Buffer;

  /** `secret`: the service's own key material; a key of its own is derived from it for this one use. */
  constructor(
    secret: Buffer,
    readonly domain: string,
  ) {
    this.key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "invites reply addresses", 32));
  }

  addressFor(meetingId: string, participant: string): string {
    return `reply-${this.token(meetingId, participant)}@${this.domain}`;
  }

  /** The token of an address of ours; undefined for any other address. */
  tokenOf(address: string): string | undefined {
    const at = address.lastIndexOf("@");
    if (at < 0 || address.slice(at + 1).toLowerCase() !== this.domain.toLowerCase()) return undefined;
    return LOCAL_PART.exec(address.slice(0, at).toLowerCase())?.[1];
  }

  /** Whether `token` is the one made for this participant of this meeting (compared in constant time). */
  matches(token: string, meetingId: string, participant: string): boolean {
    const expected = Buffer.from(this.token(meetingId, participant));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private token(meetingId: string, participant: string): string {
    return createHmac("sha256", this.key).update(`${meetingId}\n${participant.toLowerCase()}`).digest("hex").slice(0, TOKEN_HEX);
  }
}
