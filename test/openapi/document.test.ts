import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { validateOpenApi } from '../support/openapi';
import { CONSOLE_PATHS, FAVICON_PATH } from '../../src/api/console/routes';

type Doc = { openapi: string; paths: Record<string, Record<string, unknown>> };

describe('the OpenAPI document and the reference page', () => {
  let bosun: SharedBosun;
  let doc: Doc;

  beforeAll(async () => {
    bosun = await sharedBosun();
    doc = (await bosun.api.get('/api/v1/openapi.json')).body;
  });
  afterAll(() => bosun.stop());

  test('GET /api/v1/openapi.json needs no token and is a valid OpenAPI 3.1 document', async () => {
    const res = await bosun.api.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.openapi).toMatch(/^3\.1\./);
    const result = validateOpenApi(res.body);
    expect(result.errors).toBeUndefined();
    expect(result).toEqual({ valid: true, version: '3.1' });
  });

  test('every route the app registers is in the document with its method, and every documented operation is a route', async () => {
    // The reference page and its files are HTML and assets, not API.
    // The reference page and the console's pages and icon are pages, not API operations.
    const pages = new Set([...CONSOLE_PATHS, FAVICON_PATH].map((p) => `GET ${p}`));
    const routes = (await bosun.routes()).filter((route) => !/^GET \/docs(\/|$)/.test(route) && !pages.has(route));
    const documented = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    expect(routes.length).toBeGreaterThan(30);
    expect([...new Set(routes)].sort()).toEqual([...documented].sort());
    expect(routes).toEqual(expect.arrayContaining(['POST /api/v1/deployments/:id/run', 'POST /api/v1/conversations/:id/steps/:stepId/approve', 'GET /api/v1/openapi.json']));
  });

  test('every authenticated operation names its scope and documents 401, 403 and 429; every body 400, 413 and 415; every id 404', () => {
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, { security: Array<Record<string, string[]>>; responses: Record<string, unknown>; requestBody?: unknown }>)) {
        if (!p.startsWith('/api/v1/') || p === '/api/v1/openapi.json') continue;
        if (p === '/api/v1/session') {
          // Sign-in takes the token in its body; the session itself is then the credential.
          expect([method, p, op.security]).toEqual([method, p, method === 'post' ? [] : [{ consoleSession: [] }]]);
          expect([method, p, Object.keys(op.responses)]).toEqual([method, p, expect.arrayContaining(['401'])]);
          continue;
        }
        if (p.startsWith('/api/v1/session/')) {
          // Before any sign-in: how to sign in, and the OpenID provider's round trip (a browser's redirects).
          expect([method, p, op.security]).toEqual([method, p, []]);
          continue;
        }
        // Any authenticated caller (who am I, my own tokens), or one whose roles grant the action named.
        const anyone = p.startsWith('/api/v1/me') || (p.startsWith('/api/v1/tokens') && method !== 'get');
        expect([method, p, op.security]).toEqual([method, p, [{ bearerAuth: anyone ? [] : [expect.any(String)] }, { consoleSession: [] }]]);
        expect([method, p, Object.keys(op.responses)]).toEqual([method, p, expect.arrayContaining(['401', '403', '429'])]);
        if (op.requestBody) expect([method, p, Object.keys(op.responses)]).toEqual([method, p, expect.arrayContaining(['400', '413', '415'])]);
        if (/\{\w*[iI]d\}/.test(p)) expect([method, p, Object.keys(op.responses)]).toEqual([method, p, expect.arrayContaining(['404'])]);
      }
    }
  });

  test('/docs is an HTML page that loads only its own files, from this origin, under a CSP without inline script or style', async () => {
    const page = await bosun.api.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = page.headers['content-security-policy'] as string;
    const directive = (name: string) => csp.split(';').map((d) => d.trim()).find((d) => d.startsWith(`${name} `));
    expect(directive('default-src')).toBe("default-src 'none'");
    expect(directive('script-src')).toBe("script-src 'self'");
    expect(directive('style-src')).toBe("style-src 'self'");
    expect(directive('connect-src')).toBe("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);

    // Every script has a src (none inline); every referenced file is a path on this origin and is served.
    const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="/);
      expect(body!.trim()).toBe('');
    }
    expect(page.text).not.toMatch(/<style\b|\sstyle="|\son\w+="/);
    const assets = [...page.text.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/init.js']));
    for (const asset of assets) {
      expect(asset).toMatch(/^\/[^/]/);
      const res = await bosun.api.get(asset);
      expect([asset, res.status]).toEqual([asset, 200]);
    }

    // The renderer comes from the npm package, and the page's own script loads the document from this origin.
    const bundle = await bosun.api.get('/docs/swagger-ui-bundle.js').buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
    const packaged = readFileSync(path.join(path.dirname(require.resolve('swagger-ui-dist/package.json')), 'swagger-ui-bundle.js'));
    expect((bundle.body as Buffer).equals(packaged)).toBe(true);
    const init = await bosun.api.get('/docs/init.js');
    expect(init.headers['content-type']).toMatch(/javascript/);
    expect(init.text).toContain('"/api/v1/openapi.json"');
    expect(init.text).toContain('validatorUrl: null');
  });

  test('the rest of the app keeps helmet’s own CSP', async () => {
    const res = await bosun.api.get('/healthz');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
  });
});
