import { execFileSync } from 'node:child_process';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';

/** Every route the app registers (src/api/http/route-inventory.ts): the audit trail names writes from the same list. */
export { registeredRoutes } from '../../src/api/http/route-inventory';

/** @seriousme/openapi-schema-validator's verdict on a document: valid, its OpenAPI version, and the errors if not. */
export function validateOpenApi(document: unknown): { valid: boolean; version: string; errors?: unknown } {
  const output = execFileSync(process.execPath, [path.join(__dirname, 'validate-openapi.mjs')], { input: JSON.stringify(document), encoding: 'utf8' });
  return JSON.parse(output);
}

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }> }>> };

/**
 * Checks real responses against the document: the request's operation is found by method and path,
 * the status must be documented, and the body must match its schema (JSON Schema 2020-12, with formats).
 */
export function responseChecker(doc: Doc & { components: { responses: Record<string, unknown> } }) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
  }));
  const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

  /** Throws, naming the request and what is wrong, unless the response is the documented one. */
  return function expectDocumented(res: Response): void {
    const request = (res as unknown as { req: { method: string; path: string } }).req;
    const method = request.method.toLowerCase();
    const path = request.path.split('?')[0]!;
    const where = `${request.method} ${path} → ${res.status}`;
    const match = templates.find((t) => t.pattern.test(path) && doc.paths[t.template]![method]);
    if (!match) throw new Error(`${where}: no operation in the document`);
    let responsePath = `#/${pointer('paths', match.template, method, 'responses', String(res.status))}`;
    const documented = doc.paths[match.template]![method]!.responses[String(res.status)];
    if (!documented) throw new Error(`${where}: status not documented`);
    if (documented.$ref) responsePath = documented.$ref;
    const response = responsePath.split('/').slice(1).reduce<any>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    const content = response.content as Record<string, unknown> | undefined;
    if (!content) {
      if (res.text) throw new Error(`${where}: documented without a body, answered ${res.text.slice(0, 200)}`);
      return;
    }
    const mediaType = Object.keys(content).find((type) => res.headers['content-type']?.startsWith(type));
    if (!mediaType) throw new Error(`${where}: content type ${res.headers['content-type']}, documented ${Object.keys(content).join(', ')}`);
    const validate = ajv.getSchema(`openapi${responsePath}/${pointer('content', mediaType!, 'schema')}`);
    if (!validate) throw new Error(`${where}: no schema at ${responsePath}`);
    const body = mediaType === 'application/json' ? res.body : res.text;
    if (!validate(body)) throw new Error(`${where}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1000)}`);
  };
}
