import { Sealer } from "@sched/ids";
import { HttpReply } from "@sched/proto";

/**
 * Seals the replies kept under Idempotency-Key records, so a secret shown
 * once (a webhook endpoint's signing secret) never rests in Redis in clear;
 * the record's identity is bound in, so a sealed reply moved under another
 * key or another request's fingerprint does not open.
 */
export class ReplyCipher {
  private readonly sealer: Sealer;

  constructor(key: Buffer) {
    this.sealer = new Sealer(key, "the idempotency seal key");
  }

  seal(reply: HttpReply, boundTo: string): string {
    return this.sealer.seal(JSON.stringify(reply), boundTo);
  }

  /**
   * Throws when the reply was sealed under another key or binding, or was
   * changed. Read back through the contract's HttpReply schema, not taken on
   * trust: only a replay comes this way.
   */
  open(sealed: string, boundTo: string): HttpReply {
    return HttpReply.parse(JSON.parse(this.sealer.open(sealed, boundTo)));
  }
}
