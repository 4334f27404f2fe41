import { z } from "zod";
import { KeyRateLimits, Mode, Scope, Timestamp } from "../common.js";
import { ERROR_STATUS, type ErrorCode } from "../errors.js";

// Bodies the public answers carry that no service schema describes yet.

const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** The one error envelope of the API (api-decisions part 1), as the gateway writes it. */
export const ErrorBody = z.strictObject({
  error: z
    .strictObject({
      code: z.enum(ERROR_CODES).meta({ description: "What went wrong, a stable code a client can branch on." }),
      message: z.string().meta({ description: "What went wrong, for people; never internals." }),
      /** The field a validation failure is about (`participants[2]`); only on validation errors. */
      param: z.string().optional().meta({ description: "The field or parameter a validation failure is about; only on validation errors.", example: "participants[2]" }),
      /** Equal to the response's X-Request-Id header. */
      requestId: z.string().meta({ description: "The response's `X-Request-Id`.", example: "req_8ZtV2pQ5xN1mK7wR4cL9bY3e" }),
      /** The reference's section on this code: absolute under the deployment's public base URL, else relative to the API's address. */
      docUrl: z.string().meta({
        description:
          "Where the reference documents this code: its section of the reference page, under the deployment's public base URL when one is configured (`PUBLIC_BASE_URL`), otherwise relative to the API's address (resolve it against the URL you called).",
        format: "uri-reference",
        example: "https://api.example.com/docs#section/Errors/invalid_request",
      }),
    })
    .meta({ description: "The error." }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** A user as the admin API shows it (api-decisions part 3). */
export const AdminUser = z.object({
  id: z.string().meta({ description: "The user id (`usr_…`).", example: "usr_kY9pF34Qy6nB3Wwd25rq4f5z" }),
  email: z.string().meta({ description: "The user's e-mail address, lower-cased.", example: "ann@example.com" }),
  name: z.string().meta({ description: "The user's name." }),
  timezone: z.string().meta({ description: "The user's IANA time zone.", example: "Europe/Berlin" }),
  createdAt: Timestamp.meta({ description: "When the user was created." }),
});

export const AdminUserList = z.object({ data: z.array(AdminUser).meta({ description: "The users with the e-mail: none or one." }) });

/** A new API key: `key` is shown here and never again. */
export const ApiKeyCreated = z.object({
  id: z.string().meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }),
  key: z.string().meta({ description: "The API key, `sk_test_…` or `sk_live_…`; shown only in this answer." }),
  mode: Mode,
  scopes: z.array(Scope).meta({ description: "What the key may do." }),
  name: z.string().nullable().meta({ description: "The key's label; null when none was given." }),
  createdAt: Timestamp.meta({ description: "When the key was created." }),
});

export const ApiKeyRevoked = z.object({
  id: z.string().meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }),
  revoked: z.literal(true).meta({ description: "Always true: the key is refused from now on." }),
});

/** A key as the admin API shows it after creation: never the key itself. */
export const ApiKey = z.object({
  id: z.string().meta({ description: "The key id (`key_…`).", example: "key_y7AjzQHb6BAEcn6zJ4A3DdvH" }),
  mode: Mode,
  scopes: z.array(Scope).meta({ description: "What the key may do." }),
  name: z.string().nullable().meta({ description: "The key's label; null when none was given." }),
  rateLimits: KeyRateLimits.meta({ description: "The key's own limits; null ones are the deployment's defaults." }),
  createdAt: Timestamp.meta({ description: "When the key was created." }),
  revokedAt: Timestamp.nullable().meta({ description: "When the key was revoked; null while it is in use." }),
});
