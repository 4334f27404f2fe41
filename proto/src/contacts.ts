import { z } from "zod";
import { endpoint, routeEndpoint } from "./contract.js";
import { Email, Empty, Mode, NoBody, Text, Timestamp, httpRequest } from "./common.js";
import { route, type RouteDef } from "./route.js";

export const RELATIONSHIPS = ["colleague", "client", "friend", "other"] as const;
export const Relationship = z.enum(RELATIONSHIPS).meta({ description: "How the user knows the contact." });
export type Relationship = z.infer<typeof Relationship>;

/** A trusted contact as the public API shows it (api-spec 2.6). */
export const Contact = z.object({
  id: z.string().meta({ description: "The contact id (`ctc_…`).", example: "ctc_7HqW2mZp9LrX4nBv6TcK1sYd" }),
  email: z.string().meta({ description: "The contact's e-mail address, lower-cased.", example: "bo@example.com" }),
  name: z.string().nullable().meta({ description: "The name of the contact's account; null while no account has this e-mail." }),
  relationship: Relationship,
  blocked: z.boolean().meta({ description: "Whether the user blocked the contact: a block grants and receives no visibility." }),
  addedAt: Timestamp.meta({ description: "When the contact was added." }),
});
export type Contact = z.infer<typeof Contact>;

/** The contacts list: `data` only, never `hasMore` (api-spec 4.7). */
export const ContactList = z.object({ data: z.array(Contact).meta({ description: "The contacts, most recently added first." }) });
export type ContactList = z.infer<typeof ContactList>;

// ---- public routes ------------------------------------------------------

const ContactParams = z.strictObject({ id: Text.meta({ description: "The contact id (`ctc_…`).", example: "ctc_7HqW2mZp9LrX4nBv6TcK1sYd" }) });

export const ContactListQuery = z.strictObject({
  includeBlocked: z.enum(["true", "false"], { message: "must be true or false" }).optional().meta({ description: "Include blocked contacts (default false).", default: "false" }),
});

export const ContactCreateBody = z.strictObject({
  email: Email.meta({ description: "The contact's e-mail address, not the user's own; one already in the list is 409 `contact_exists`.", example: "bo@example.com" }),
  relationship: Relationship.optional().meta({ description: "How the user knows the contact.", default: "other" }),
});

export const ContactUpdateBody = z
  .strictObject({
    relationship: Relationship.optional().meta({ description: "The new relationship." }),
    blocked: z.boolean().optional().meta({ description: "Block (`true`) or unblock (`false`) the contact." }),
  })
  .refine((b) => b.relationship !== undefined || b.blocked !== undefined, {
    message: "provide at least one of relationship, blocked",
  });

export const contactsList = routeEndpoint(
  "contacts.v1.http.list",
  httpRequest({ params: Empty, query: ContactListQuery, body: NoBody }),
  { 200: ContactList },
);
export const contactsCreate = routeEndpoint(
  "contacts.v1.http.create",
  httpRequest({ params: Empty, query: Empty, body: ContactCreateBody }),
  { 201: Contact },
);
export const contactsGet = routeEndpoint(
  "contacts.v1.http.get",
  httpRequest({ params: ContactParams, query: Empty, body: NoBody }),
  { 200: Contact },
);
export const contactsUpdate = routeEndpoint(
  "contacts.v1.http.update",
  httpRequest({ params: ContactParams, query: Empty, body: ContactUpdateBody }),
  { 200: Contact },
);
export const contactsDelete = routeEndpoint(
  "contacts.v1.http.delete",
  httpRequest({ params: ContactParams, query: Empty, body: NoBody }),
  { 204: null },
);

export const contactsRoutes: RouteDef[] = [
  route({ method: "GET", path: "/v1/contacts", endpoint: contactsList, operationId: "contactsList", auth: "api-key", scope: "contacts:read", bucket: "standard", hasBody: false, summary: "List trusted contacts, most recently added first", responses: { 200: "The contacts" } }),
  route({ method: "POST", path: "/v1/contacts", endpoint: contactsCreate, operationId: "contactsCreate", auth: "api-key", scope: "contacts:write", bucket: "standard", hasBody: true, idempotent: true, summary: "Add a trusted contact", responses: { 201: "The contact added" }, errors: ["contact_exists"] }),
  route({ method: "GET", path: "/v1/contacts/:id", endpoint: contactsGet, operationId: "contactsGet", auth: "api-key", scope: "contacts:read", bucket: "standard", hasBody: false, summary: "Retrieve one contact", responses: { 200: "The contact" } }),
  route({ method: "PATCH", path: "/v1/contacts/:id", endpoint: contactsUpdate, operationId: "contactsUpdate", auth: "api-key", scope: "contacts:write", bucket: "standard", hasBody: true, summary: "Change a contact's relationship or blocked flag", responses: { 200: "The whole contact after the change" } }),
  route({ method: "DELETE", path: "/v1/contacts/:id", endpoint: contactsDelete, operationId: "contactsDelete", auth: "api-key", scope: "contacts:write", bucket: "standard", hasBody: false, summary: "Remove a contact", responses: { 204: "The contact is removed" } }),
];

// ---- internal endpoints -------------------------------------------------

/** A person with an account, as the visibility question names them. */
const Party = z.object({ userId: z.string().min(1), email: z.string().min(1).max(254) });

/**
 * Which of `others` count for `viewer` (api-decisions 7 and 10): a block by
 * either side wins; otherwise one of them must have the other as a contact.
 */
export const contactsVisibility = endpoint(
  "contacts.v1.visibility",
  z.object({ mode: Mode, viewer: Party, others: z.array(Party).max(100) }),
  z.object({ visibleUserIds: z.array(z.string()) }),
);

/**
 * Whether `owner` lets the person with `viewerEmail` see his day view
 * (api-decisions 6, `email=`): the owner has that e-mail as a contact he has not blocked.
 * With `viewerUserId` (and the owner's e-mail) a block by the viewer counts too
 * (api-decisions 8: a blocked contact grants and receives no visibility): the
 * viewer having the owner as a blocked contact refuses the view.
 */
export const contactsGrantsView = endpoint(
  "contacts.v1.grants-view",
  z
    .object({
      mode: Mode,
      owner: z.object({ userId: z.string().min(1), email: z.string().min(1).max(254).optional() }),
      viewerEmail: z.string().min(1).max(254),
      viewerUserId: z.string().min(1).optional(),
    })
    .refine((r) => r.viewerUserId === undefined || r.owner.email !== undefined, {
      message: "owner.email is required with viewerUserId",
      path: ["owner", "email"],
    }),
  z.object({ granted: z.boolean() }),
);
