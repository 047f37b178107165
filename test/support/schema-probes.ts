import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { z } from 'zod';

/*
 * Holding a request schema of the OpenAPI document against the zod schema the route validates with:
 * the same values, accepted or refused by both. Walks the two side by side down to their leaves.
 */

export type Json = Record<string, any>;

/** A place in a request: a body's object or leaf (JSON values), or a parameter (a string on the wire). */
export interface Probed {
  path: string;
  zod: z.ZodType;
  json: Json;
  kind: 'object' | 'leaf' | 'wire';
}

const def = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Json } })._zod.def;

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);
const LEAVES = new Set(['string', 'number', 'int', 'boolean', 'enum', 'literal', 'null']);

export function documentResolver(doc: Json) {
  return (json: Json): Json => {
    let node = json;
    while (node?.$ref) node = (node.$ref as string).slice(2).split('/').reduce<Json>((at, part) => at[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return node;
  };
}

const isLeaf = (schema: z.ZodType): boolean => {
  const d = def(schema);
  if (WRAPPERS.has(d.type) || d.type === 'nullable') return isLeaf(d.innerType);
  if (d.type === 'pipe') return isLeaf(d.in);
  if (d.type === 'union') return (d.options as z.ZodType[]).every(isLeaf);
  return LEAVES.has(d.type);
};

/** Every object and leaf of a body schema, each with the document's schema for it. */
export function bodyPlaces(schema: z.ZodType, json: Json, resolve: (json: Json) => Json, path = ''): Probed[] {
  const d = def(schema);
  const node = resolve(json);
  if (WRAPPERS.has(d.type)) return bodyPlaces(d.innerType, node, resolve, path);
  if (d.type === 'nullable') return bodyPlaces(d.innerType, (node.anyOf as Json[]).find((option) => option.type !== 'null')!, resolve, path);
  if (isLeaf(schema)) return [{ path, zod: schema, json: node, kind: 'leaf' }];
  if (d.type === 'pipe') return bodyPlaces(d.in, node, resolve, path);
  if (d.type === 'object') {
    const shape = d.shape as Record<string, z.ZodType>;
    return [
      { path: path || '(body)', zod: schema, json: node, kind: 'object' },
      ...Object.entries(shape).flatMap(([key, field]) => bodyPlaces(field, node.properties[key], resolve, path ? `${path}.${key}` : key)),
    ];
  }
  // Any value at all (a JSON-RPC error's `data`): nothing here for the document and the route to disagree on.
  if (d.type === 'unknown' || d.type === 'any') return [];
  if (d.type === 'array') return bodyPlaces(d.element, node.items, resolve, `${path}[]`);
  if (d.type === 'record') return [...bodyPlaces(d.keyType, node.propertyNames, resolve, `${path}{key}`), ...bodyPlaces(d.valueType, node.additionalProperties, resolve, `${path}{}`)];
  if (d.type === 'union') {
    const options = (node.oneOf ?? node.anyOf) as Json[];
    return (d.options as z.ZodType[]).flatMap((option, i) => bodyPlaces(option, options[i]!, resolve, `${path}<${i}>`));
  }
  throw new Error(`${path}: no walk for a zod ${d.type}`);
}

const repeat = (unit: string, n: number) => (n >= 0 ? unit.repeat(n) : null);

/** Strings near every edge a request string has: blank ones, lengths around the limits (counted in characters), shapes the API's patterns take. */
function stringProbes(json: Json): string[] {
  const lengths = [json.minLength, json.maxLength].filter((n): n is number => typeof n === 'number').flatMap((n) => [n - 1, n, n + 1]);
  const sized = lengths.flatMap((n) => [repeat('x', n), repeat('😀', n), repeat('é', n)]).filter((s): s is string => s !== null);
  const shapes = ['', ' ', '   ', '\t', '\n', '\u00a0', '\ufeff', '\u2028', ' x ', 'x', 'X', '0', '00', '-', '.', 'a b', 'x\n', 'x\u0000y', '😀', 'é'];
  const patterns = ['1s', '90d', '0d', '001d', '1000000d', '12h ', ' 2w', '1', '01', '1.0', '+1', ' 1', '1e1', '0x10', '-1', '9007199254740991', '9007199254740992', '25%', '0%', '1%', '100%', '101%', '05%', '%'];
  const names = ['deploy', 'web', 'eu:west-1', 'DB_PASSWORD', 'a_b', '_x', 'root$', 'example.com', 'Example.COM.', '-bad.com', '127.0.0.1', '256.1.1.1', '::1', '1::', 'fe80::1%eth0', '::ffff:1.2.3.4', '0123456789abcdef01234567', '0123456789ABCDEF01234567', '0123456789abcdef0123456z', 'read', 'admin', 'server', 'migration_plan', 'json', 'raw', 'private_key', 'password', 'x'.repeat(300)];
  return [...new Set([...shapes, ...sized, ...patterns, ...names])];
}

const NUMBER_PROBES = [0, 1, -1, 1.5, 2, 10, 11, 22, 100, 101, 65535, 65536, 86400, 86401, 2 ** 53 - 1, 2 ** 53];

/** JSON values for a leaf of a body. */
export function leafProbes(json: Json): unknown[] {
  const strings = stringProbes(json);
  const enums = JSON.stringify(json).match(/"(?:enum|const)":\s*(\[[^\]]*\]|"[^"]*"|true|false)/g)?.flatMap((m) => [JSON.parse(m.slice(m.indexOf(':') + 1))].flat()) ?? [];
  return [...strings, ...enums, ...NUMBER_PROBES, true, false, null, [], {}];
}

/** Strings for a parameter (what its wire value can be), beside the leaf probes as strings. */
export const wireProbes = (json: Json): string[] => [...new Set([...stringProbes(json), ...NUMBER_PROBES.map(String)])];

/** The document's verdict on a value: JSON Schema 2020-12 with formats, refs into the document resolved. */
export function documentValidator(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const compiled = new Map<string, (value: unknown) => boolean>();
  return (json: Json, value: unknown): boolean => {
    const key = JSON.stringify(json);
    if (!compiled.has(key)) compiled.set(key, ajv.compile(JSON.parse(key.replaceAll('"$ref":"#/', '"$ref":"openapi#/'))) as (value: unknown) => boolean);
    return compiled.get(key)!(value);
  };
}

/**
 * A parameter's wire value as the document reads it: an integer parameter is the value its plain
 * digits spell (as a client serializes one), anything else the string itself.
 */
export function wireValue(json: Json, wire: string): unknown {
  const types = [json.type, ...((json.anyOf ?? []) as Json[]).map((option) => option.type)];
  if (types.includes('integer')) return /^-?(?:0|[1-9][0-9]*)$/.test(wire) ? Number(wire) : wire;
  return wire;
}
