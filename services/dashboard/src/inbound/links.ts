import type { Knex } from "@sched/db";
import { insertSignInLink } from "../db/queries.js";
import { hashSecret, newSecret } from "../domain/secrets.js";
import { linkExpiry, signInUrl } from "../domain/signIn.js";

/** Makes a single-use sign-in link for a user; only the hash of its token is kept. */
export async function issueSignInLink(db: Knex, dashboardUrl: string, userId: string): Promise<{ url: string; expiresAt: Date }> {
  const token = newSecret("sil");
  const expiresAt = linkExpiry(new Date());
  await insertSignInLink(db, { tokenHash: hashSecret(token), userId, expiresAt });
  return { url: signInUrl(dashboardUrl, token), expiresAt };
}
