import { bearer, startBosun, type Bosun } from '../support/bosun';
import { responseChecker } from '../support/openapi';
import { openApiDocument } from '../../src/api/bosun-api';
import type { Json } from '../support/schema-probes';

const doc = openApiDocument() as unknown as Json;

/** The document's API operations that take a token, as [method, path template, operation]. */
const operations = Object.entries(doc.paths as Record<string, Record<string, Json>>)
  .flatMap(([template, item]) => Object.entries(item).map(([method, op]) => [method, template, op] as const))
  .filter(([, template, op]) => template.startsWith('/api/v1/') && JSON.stringify(op.security).includes('bearerAuth'));

const ID = '^[0-9a-fA-F]{24}$';
const pathParameters = (op: Json) => ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
const isId = (parameter: Json) => parameter.schema.pattern === ID;

/** A value of the parameter's form that names nothing. */
const wellFormed = (parameter: Json) => (isId(parameter) ? '0123456789abcdef01234567' : parameter.schema.type === 'integer' ? '1' : 'NO_SUCH_NAME');
/** Values its schema refuses, as a client might send them (the last one percent-encoded: U+0084). */
const malformed = (parameter: Json) => (parameter.schema.type === 'integer' ? ['x', '0', '1.5'] : ['not-an-id', 'bad-name!', '%C2%84']);

const fill = (template: string, op: Json, values: Record<string, string> = {}) =>
  template.replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? wellFormed(pathParameters(op).find((p) => p.name === name)!));

/**
 * Whatever a client sends, the answer's status is one the document lists for the operation, with
 * the body it documents: here, path parameters the schema refuses, and bodies that are not JSON,
 * not valid JSON, or not an object, sent to every operation.
 */
describe('every status an operation answers is documented', () => {
  let bosun: Bosun;
  let admin: string;
  let expectDocumented: ReturnType<typeof responseChecker>;

  beforeAll(async () => {
    bosun = await startBosun({ worker: false });
    admin = await bosun.token('openapi-status-codes');
    expectDocumented = responseChecker((await bosun.api.get('/api/v1/openapi.json')).body);
  });
  afterAll(() => bosun.stop());

  const send = (method: string, url: string) => (bosun.api as unknown as Record<string, (url: string) => import('supertest').Test>)[method]!(url).set(bearer(admin));

  const withParameters = operations.filter(([, , op]) => pathParameters(op).length > 0);

  test.each(withParameters.map(([method, template, op]) => [`${method.toUpperCase()} ${template}`, method, template, op] as const))(
    'a malformed path parameter of %s: an id answers 404 like one that names nothing',
    async (_name, method, template, op) => {
      for (const parameter of pathParameters(op)) {
        for (const value of malformed(parameter)) {
          const res = await send(method, fill(template, op, { [parameter.name]: value }));
          expectDocumented(res);
          // With no body to refuse first, an id that cannot name anything is simply not found.
          if (isId(parameter) && !op.requestBody?.required) expect([parameter.name, value, res.status]).toEqual([parameter.name, value, 404]);
        }
      }
    },
  );

  const BODIES: Array<[string, string, string]> = [
    ['text/plain', 'hello', 'not JSON'],
    ['application/json', '{"title": ', 'not valid JSON'],
    ['application/json', '42', 'not an object'],
  ];

  test.each(operations.map(([method, template, op]) => [`${method.toUpperCase()} ${template}`, method, template, op] as const))(
    'a body that is not JSON, not valid JSON or not an object, sent to %s: refused as documented by a write, ignored by a read or a delete',
    async (_name, method, template, op) => {
      const url = fill(template, op);
      const without = await send(method, url);
      for (const [type, body, what] of BODIES) {
        const res = await send(method, url).set('Content-Type', type).send(body);
        expectDocumented(res);
        if (method === 'get' || method === 'delete') expect([what, res.status]).toEqual([what, without.status]);
        else expect([what, res.status]).toEqual([what, { 'not JSON': 415, 'not valid JSON': 400, 'not an object': 422 }[what]]);
      }
    },
  );
});
