import { OPENAPI_PATH } from './openapi';

/** The reference page: Swagger UI's files from the package, started by a script of our own (CSP forbids inline ones). */
export const DOCS_PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Bosun API reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css">
    <link rel="stylesheet" href="/docs/index.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// BaseLayout has no top bar (which would load any URL typed in); validatorUrl null keeps the page off validator.swagger.io.
export const DOCS_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    layout: 'BaseLayout',
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
  });
});
`;
