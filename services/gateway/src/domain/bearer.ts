/** The token of an `Authorization: Bearer <token>` header, or undefined when the header has another shape. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return m?.[1];
}
