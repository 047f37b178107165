import path from 'node:path';
import { Router } from 'express';
import helmet from 'helmet';
import { OPENAPI_PATH } from './openapi';
import { DOCS_PAGE, DOCS_SCRIPT } from './docs-page';

const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
/** The renderer's files the page loads, served from the npm package (no CDN). */
const SWAGGER_UI_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'index.css', 'favicon-32x32.png', 'favicon-16x16.png'];

/** Swagger UI runs with no inline script or style: its own files, the document, and data: images from its CSS. */
const docsCsp = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
});

/** The OpenAPI document (no authentication: it holds no data), as `document` builds it, and the reference page that renders it. */
export function referenceRoutes(document: () => object): Router {
  const router = Router();
  router.get(OPENAPI_PATH, (_req, res) => {
    res.json(document());
  });

  const docs = Router();
  docs.use(docsCsp);
  docs.get('/', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  docs.get('/init.js', (_req, res) => {
    res.type('js').send(DOCS_SCRIPT);
  });
  for (const file of SWAGGER_UI_FILES) {
    docs.get(`/${file}`, (_req, res) => {
      res.sendFile(path.join(SWAGGER_UI_DIR, file), { maxAge: '1h' });
    });
  }
  router.use('/docs', docs);
  return router;
}
