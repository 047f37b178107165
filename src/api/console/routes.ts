import path from 'node:path';
import express, { Router, type RequestHandler } from 'express';
import type { ConsoleBundle } from '../../console/bundle';
import { favicon } from './favicon';
import { CONSOLE_PAGES } from './pages';

/**
 * The console's pages allow only this origin's own scripts, styles and connections: no inline script,
 * no CDN, no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The console's icon, linked from its page's head (an asset, not an API operation). */
export const FAVICON_PATH = '/favicon.ico';

/** Every URL a person may paste (the console's pages: pages.ts): each answers with the console's page, which routes itself. */
export const CONSOLE_PATHS: readonly string[] = CONSOLE_PAGES.map((page) => page.path);

/** The console's page, for a browser (JSON clients asking `/` get the API's links instead: see app.ts). */
export const consolePage =
  (bundle: ConsoleBundle): RequestHandler =>
  (_req, res) => {
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(bundle.indexHtml);
  };

/** The bundle's files under /console/ (named by content hash: cached for good), the icon, and the pages. */
export function consoleRoutes(bundle: ConsoleBundle): Router {
  const router = Router();
  router.use(
    '/console',
    express.static(path.resolve(bundle.dir), {
      immutable: true,
      maxAge: '365d',
      index: false,
      fallthrough: true,
      setHeaders: (res) => res.setHeader('Content-Security-Policy', CONSOLE_CSP),
    }),
  );
  router.get(FAVICON_PATH, favicon);
  for (const page of CONSOLE_PATHS) router.get(page, consolePage(bundle));
  return router;
}
