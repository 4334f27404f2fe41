import { zodToOpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import {
  AdminUser,
  AdminUserList,
  ApiKeyCreated,
  ApiKeyRevoked,
  ApiKey,
  Contact,
  ContactList,
  DaySlot,
  DayViewBody,
  Duration,
  ErrorBody,
  type ErrorCode,
  errorDocUrl,
  errorSectionAnchor,
  Meeting,
  MeetingInvite,
  MeetingList,
  MeetingListItem,
  MeetingStatus,
  RecommendationBody,
  RecommendedSlot,
  REFERENCE_PAGE_PATH,
  Relationship,
  UserProfile,
  WorkingHoursEntry,
} from "@sched/proto";
import { z } from "zod";

/** The schemas shown as named components, by the name the document gives them. */
const NAMED: ReadonlyArray<readonly [string, z.ZodType]> = [
  ["Account", UserProfile],
  ["WorkingHoursEntry", WorkingHoursEntry],
  ["Meeting", Meeting],
  ["MeetingListItem", MeetingListItem],
  ["MeetingList", MeetingList],
  ["MeetingInvite", MeetingInvite],
  ["Duration", Duration],
  ["MeetingStatus", MeetingStatus],
  ["DayView", DayViewBody],
  ["DaySlot", DaySlot],
  ["Recommendation", RecommendationBody],
  ["RecommendedSlot", RecommendedSlot],
  ["Contact", Contact],
  ["ContactList", ContactList],
  ["Relationship", Relationship],
  ["AdminUser", AdminUser],
  ["AdminUserList", AdminUserList],
  ["ApiKeyCreated", ApiKeyCreated],
  ["ApiKeyRevoked", ApiKeyRevoked],
  ["ApiKey", ApiKey],
];

/**
 * Names the contract's own schema instances, so that every place using one
 * (a list's items, a nested enum) becomes a `$ref` to its component. The
 * generator's registry is keyed by instance; naming a copy (`.openapi(name)`)
 * would leave the nested uses inline.
 */
export function nameComponents(): void {
  for (const [name, schema] of NAMED) zodToOpenAPIRegistry.add(schema, { _internal: { refId: name } });
}

/** The deployment address the document's samples show. */
export const SAMPLE_BASE_URL = "https://api.example.com";

/** What the `docUrl` of an error with this code ends with: the reference page's section on the code. */
export function docUrlPattern(code: ErrorCode): RegExp {
  return new RegExp(`${REFERENCE_PAGE_PATH}#${errorSectionAnchor(code)}$`);
}

/** `invalid_request` → `InvalidRequestError`. */
export function errorComponentName(code: ErrorCode): string {
  return `${code.replace(/(^|_)([a-z])/g, (_m, _sep: string, c: string) => c.toUpperCase())}Error`;
}

/**
 * The error envelope once per code, with `code` fixed: a response lists the
 * codes it can carry as a `oneOf` of these. They are referenced by name only,
 * so they are handed to the generator as definitions of their own.
 */
export function errorComponents(codes: Iterable<ErrorCode>): Array<{ type: "schema"; schema: z.ZodType }> {
  const { error } = ErrorBody.shape;
  return [...codes].map((code) => {
    // extend() makes a new schema, which keeps none of the descriptions of the one it extends.
    const docUrl = error.shape.docUrl.regex(docUrlPattern(code)).meta({ ...error.shape.docUrl.meta(), example: errorDocUrl(code, SAMPLE_BASE_URL) });
    const schema = z.strictObject({ error: error.extend({ code: z.literal(code).meta({ ...error.shape.code.meta() }), docUrl }).meta({ ...error.meta() }) });
    zodToOpenAPIRegistry.add(schema, { _internal: { refId: errorComponentName(code) } });
    return { type: "schema", schema };
  });
}
