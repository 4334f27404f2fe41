export { buildOpenApiDocument, OPENAPI_JSON_PATH, type OpenApiDocument } from "./document.js";
