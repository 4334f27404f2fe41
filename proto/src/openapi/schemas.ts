import { z } from "zod";
import { KeyRateLimits, Mode, Scope, Timestamp } from "../common.js";
import { ERROR_STATUS, type ErrorCode } from "../errors.js";

// Bodies the public answers carry that no service schema describes yet.

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** The one error envelope of the API (api-decisions part 1), as the gateway writes it. */
export const ErrorBody = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    /** The field a validation failure is about (`participants[2]`); only on validation errors. */
    param: z.string().optional(),
    /** Equal to the response's X-Request-Id header. */
    requestId: z.string(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** A user as the admin API shows it (api-decisions part 3). */
export const AdminUser = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  timezone: z.string(),
  createdAt: Timestamp,
});

export const AdminUserList = z.object({ data: z.array(AdminUser) });

/** A new API key: `key` is shown here and never again. */
export const ApiKeyCreated = z.object({
  id: z.string(),
  key: z.string(),
  mode: Mode,
  scopes: z.array(Scope),
  name: z.string().nullable(),
  createdAt: Timestamp,
});

export const ApiKeyRevoked = z.object({ id: z.string(), revoked: z.literal(true) });

/** A key as the admin API shows it after creation: never the key itself. */
export const ApiKey = z.object({
  id: z.string(),
  mode: Mode,
  scopes: z.array(Scope),
  name: z.string().nullable(),
  rateLimits: KeyRateLimits,
  createdAt: Timestamp,
  revokedAt: Timestamp.nullable(),
});
