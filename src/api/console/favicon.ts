import type { RequestHandler } from 'express';

/** The console's icon: a ship's wheel on the console's blue, small enough to live in the code (no asset to ship). */
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f6feb"/><g fill="none" stroke="#fff" stroke-width="2.5"><circle cx="16" cy="16" r="8"/><path d="M16 4v24M4 16h24M7.5 7.5l17 17M24.5 7.5l-17 17"/></g><circle cx="16" cy="16" r="3" fill="#fff"/></svg>`;

/** GET /favicon.ico: browsers ask for it whatever the page links; an SVG answers both (Chromium, Firefox and Safari read SVG icons). */
export const favicon: RequestHandler = (_req, res) => {
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.type('image/svg+xml').send(ICON);
};
