import type express from "express";
import { ASSETS } from "./assets.js";

/** No inline script or style, nothing from elsewhere, never inside a frame. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers every dashboard answer carries; pages are never cached (they hold a CSRF token, and once a new key). */
export const securityHeaders: express.RequestHandler = (_req, res, next) => {
  res.set({
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    // Sign-in links carry their token in the URL: it must not leak to another site.
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
  });
  next();
};

/** The hashed script and style: their names change with their content, so browsers keep them a year. */
export function serveAssets(router: express.Router): void {
  for (const asset of Object.values(ASSETS)) {
    router.get(asset.path, (_req, res) => {
      res.set({ "Content-Type": asset.type, "Cache-Control": "public, max-age=31536000, immutable" }).send(asset.body);
    });
  }
}
