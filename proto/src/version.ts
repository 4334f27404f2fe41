/**
 * The version of the public contract (docs/versioning.md): the major is the
 * `/v1` of every path; a minor version for each release that adds to it; a
 * patch for corrections of the document alone. The OpenAPI document and the
 * typed client's package carry it.
 */
export const API_VERSION = "1.1.0";
