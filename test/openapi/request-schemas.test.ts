import type { z } from 'zod';
import { bosunOperations, openApiDocument } from '../../src/api/bosun-api';
import type { Operation } from '../../src/api/openapi/operation';
import { bodyPlaces, documentResolver, documentValidator, leafProbes, wireProbes, wireValue, type Json, type Probed } from '../support/schema-probes';

/**
 * The document says what the routes accept: for every operation, every field of its body and every
 * parameter is probed with values around each limit (blank strings, lengths counted in characters,
 * numbers spelled every way), and the document's schema (ajv) must accept exactly the values the
 * route's zod schema accepts. What no schema can state is named in the operation's 422 instead.
 */
describe('request schemas: the document accepts what the routes accept', () => {
  const doc = openApiDocument() as unknown as Json;
  const resolve = documentResolver(doc);
  const accepts = documentValidator(doc);
  const documented = (op: Operation) => doc.paths[op.path.replace(/:(\w+)/g, '{$1}')][op.method];

  /** Places whose rule no schema can state, each named in its operation's `beyondSchema`. */
  const scheduleRules = [
    { place: 'cron', named: '`cron` has five fields, each within its range' },
    { place: 'every', named: '`every` at least 1 minute' },
    { place: 'time_zone', named: '`time_zone` an IANA name' },
    { place: 'catch_up_window', named: '`catch_up_window` between 10s and 7d' },
    { place: 'jitter', named: '`jitter` at most 1h' },
  ];
  const sourceRules = [
    { place: 'git.host_key', named: '`git.host_key` an SSH public key line' },
    { place: 'every', named: '`every` between 1m and 24h' },
    { place: 'web_url', named: '`web_url` an https URL' },
  ];
  const BEYOND_SCHEMA: Record<string, Array<{ place: string; named: string }>> = {
    createDeployment: [{ place: 'parameters[].pattern', named: '`pattern` must be a valid regular expression' }],
    updateDeployment: [{ place: 'parameters[].pattern', named: '`pattern` must be a valid regular expression' }],
    createPipeline: [{ place: 'parameters[].pattern', named: '`pattern` must be a valid regular expression' }],
    updatePipeline: [{ place: 'parameters[].pattern', named: '`pattern` must be a valid regular expression' }],
    createSchedule: scheduleRules,
    updateSchedule: scheduleRules,
    createPipelineSchedule: scheduleRules,
    updatePipelineSchedule: scheduleRules,
    createConfigSource: sourceRules,
    updateConfigSource: sourceRules,
  };

  function places(op: Operation): Array<Probed & { where: string }> {
    const operation = documented(op);
    const found: Array<Probed & { where: string }> = [];
    if (op.body) {
      const json = operation.requestBody.content['application/json'].schema as Json;
      found.push(...bodyPlaces(op.body.schema, json, resolve).map((p) => ({ ...p, where: 'body' })));
    }
    const parameter = (name: string, where: string) => resolve((operation.parameters as Json[]).find((p) => p.name === name && p.in === where)!.schema);
    for (const [name, p] of Object.entries(op.params ?? {})) found.push({ path: name, zod: p.schema, json: parameter(name, 'path'), kind: 'wire', where: 'path' });
    for (const [name, p] of Object.entries(op.headers ?? {})) found.push({ path: name, zod: p.schema, json: parameter(name, 'header'), kind: 'wire', where: 'header' });
    for (const [name, schema] of Object.entries((op.query?.shape ?? {}) as Record<string, z.ZodType>)) {
      const json = parameter(name, 'query');
      // A repeatable parameter (`tag`) is probed one value at a time.
      const zod = json.type === 'array' ? (schema as z.ZodOptional<z.ZodArray<z.ZodType>>).unwrap().element : schema;
      found.push({ path: json.type === 'array' ? `${name}[]` : name, zod, json: json.type === 'array' ? resolve(json.items) : json, kind: 'wire', where: 'query' });
    }
    return found;
  }

  const withBody = bosunOperations.filter((op) => op.body || op.params || op.query || op.headers);

  test.each(withBody.map((op) => [op.operationId, op] as const))('%s', (_id, op) => {
    const disagreements: string[] = [];
    for (const place of places(op)) {
      if (BEYOND_SCHEMA[op.operationId]?.some((rule) => rule.place === place.path)) continue;
      const probes: unknown[] = place.kind === 'object' ? [{}] : place.kind === 'leaf' ? leafProbes(place.json) : wireProbes(place.json);
      for (const probe of probes) {
        const byRoute = place.zod.safeParse(probe).success;
        const byDocument = accepts(place.json, place.kind === 'wire' ? wireValue(place.json, probe as string) : probe);
        if (byRoute !== byDocument) disagreements.push(`${place.where} ${place.path} = ${JSON.stringify(probe)}: the route ${byRoute ? 'accepts' : 'refuses'} it, the document ${byDocument ? 'accepts' : 'refuses'} it`);
      }
    }
    expect(disagreements).toEqual([]);
  });

  test('what no schema can state is named in the operation’s 422', () => {
    for (const [operationId, rules] of Object.entries(BEYOND_SCHEMA)) {
      const op = bosunOperations.find((o) => o.operationId === operationId)!;
      for (const { named } of rules) expect([operationId, documented(op).responses['422'].description]).toEqual([operationId, expect.stringContaining(named)]);
    }
    for (const op of bosunOperations.filter((o) => o.beyondSchema)) {
      const description = documented(op).responses['422'].description as string;
      for (const rule of op.beyondSchema!) expect([op.operationId, description]).toEqual([op.operationId, expect.stringContaining(rule)]);
    }
  });
});
