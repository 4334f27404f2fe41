// Adjustments the generator cannot express, applied to the generated document.

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function isObjectSchema(schema: Json): boolean {
  return schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object"));
}

/** Marks every object schema without an explicit rule as closed, through properties, items and unions. */
function close(schema: unknown): void {
  if (!isObject(schema) || "$ref" in schema) return;
  if (isObjectSchema(schema) && isObject(schema.properties) && schema.additionalProperties === undefined) schema.additionalProperties = false;
  if (isObject(schema.properties)) for (const p of Object.values(schema.properties)) close(p);
  close(schema.items);
  for (const key of ["prefixItems", "anyOf", "oneOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list)) for (const s of list) close(s);
  }
}

function operations(document: Json): Json[] {
  const paths = isObject(document.paths) ? document.paths : {};
  return Object.values(paths).flatMap((item) => (isObject(item) ? Object.values(item).filter(isObject) : []));
}

/**
 * Response bodies never carry a field the document does not name: the
 * service schemas strip unknown keys rather than refuse them, so their
 * objects come out open and are closed here. Named components are response
 * bodies (or strict request parts, already closed).
 */
export function closeResponseSchemas(document: Json): void {
  const components = isObject(document.components) && isObject(document.components.schemas) ? document.components.schemas : {};
  for (const schema of Object.values(components)) close(schema);
  for (const op of operations(document)) {
    const responses = isObject(op.responses) ? op.responses : {};
    for (const response of Object.values(responses)) {
      if (!isObject(response) || !isObject(response.content)) continue;
      for (const media of Object.values(response.content)) if (isObject(media)) close(media.schema);
    }
  }
}

/**
 * A query parameter read as a number (`limit`) is validated as digits in a
 * string, because query values arrive as strings; its schema says integer,
 * and the string checks the generator copied do not apply to one.
 */
export function dropStringChecksOfIntegerParameters(document: Json): void {
  for (const op of operations(document)) {
    if (!Array.isArray(op.parameters)) continue;
    for (const parameter of op.parameters) {
      if (!isObject(parameter) || !isObject(parameter.schema) || parameter.schema.type !== "integer") continue;
      delete parameter.schema.pattern;
      delete parameter.schema.minLength;
      delete parameter.schema.maxLength;
    }
  }
}
