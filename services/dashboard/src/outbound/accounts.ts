import type { Bus } from "@sched/bus";
import {
  accountsAdminCreateKey,
  accountsAdminCreateUser,
  accountsAdminFindUsers,
  accountsGetMe,
  accountsListKeys,
  accountsLookupUsers,
  accountsRevokeOwnKey,
  accountsUpdateMe,
  AdminUser,
  AdminUserList,
  ApiKeyCreated,
  UserProfile,
  type Mode,
  type OwnApiKey,
  type Scope,
} from "@sched/proto";
import type { z } from "zod";
import type { ProfileChanges } from "../domain/forms.js";
import { actingFor } from "./caller.js";

/**
 * The accounts service as the dashboard asks it, over the bus like any other
 * caller. The dashboard acts for the signed-in user only: every call names
 * that user, and accounts checks that a key belongs to them.
 */
export class AccountsClient {
  constructor(private readonly bus: Bus) {}

  async userById(userId: string): Promise<UserProfile | undefined> {
    const { users } = await this.bus.request(accountsLookupUsers, { ids: [userId] });
    return users[0];
  }

  async userIdByEmail(email: string): Promise<string | undefined> {
    const reply = await this.bus.request(accountsAdminFindUsers, { params: {}, query: { email }, body: undefined });
    return AdminUserList.parse(reply.body).data[0]?.id;
  }

  /** Signs a new user up (409 user_exists when the e-mail was taken meanwhile). */
  async createUser(email: string, name: string): Promise<string> {
    const reply = await this.bus.request(accountsAdminCreateUser, { params: {}, query: {}, body: { email, name } });
    return AdminUser.parse(reply.body).id;
  }

  async keys(userId: string): Promise<OwnApiKey[]> {
    return (await this.bus.request(accountsListKeys, { userId })).keys;
  }

  async createKey(userId: string, key: { name: string; mode: Mode; scopes: Scope[] }): Promise<ApiKeyCreated> {
    const reply = await this.bus.request(accountsAdminCreateKey, { params: { id: userId }, query: {}, body: key });
    return ApiKeyCreated.parse(reply.body);
  }

  async revokeKey(userId: string, keyId: string): Promise<void> {
    await this.bus.request(accountsRevokeOwnKey, { userId, keyId });
  }

  async profile(user: UserProfile): Promise<UserProfile> {
    return UserProfile.parse((await this.bus.request(accountsGetMe, { params: {}, query: {}, body: undefined }, { caller: actingFor(user, "test") })).body);
  }

  async updateProfile(user: UserProfile, changes: ProfileChanges): Promise<UserProfile> {
    const reply = await this.bus.request(accountsUpdateMe, { params: {}, query: {}, body: changes }, { caller: actingFor(user, "test") });
    return UserProfile.parse(reply.body);
  }
}

type ApiKeyCreated = z.infer<typeof ApiKeyCreated>;
