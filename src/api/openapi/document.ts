import { z } from 'zod';
import { errorBodySchema, statusOf, type ErrorCode } from '../http/errors';
import type { Operation, Parameter, ResponseSpec } from './operation';

type JsonSchema = Record<string, unknown>;

const ERROR_WHEN: Record<ErrorCode, string> = {
  bad_request: 'A path parameter is not valid percent-encoding (`%zz`)',
  malformed_json: 'The body is not valid JSON',
  unauthorized: '`Authorization` missing or malformed, token unknown or revoked',
  forbidden: 'No role binding of the caller allows this on what it touches (the servers, the deployment), or the token’s scopes narrow it out',
  self_approval: 'The person who triggered a run cannot approve it',
  people_only: 'Only people approve: a service account (a CI token) cannot',
  not_found: 'No such resource in your organization',
  method_not_allowed: 'The path exists but not with this method; `Allow` lists those it takes',
  conflict: 'The request conflicts with the resource’s state (see the route’s description)',
  plan_changed: 'The plan changed since the `plan_hash` given was computed (a server tagged, a step edited): `given_plan_hash` and `current_plan_hash`; nothing started',
  managed_by_source: 'A Git source manages the definition (its `managed_by`): change it in its file, or send `"force": true` (`?force=true` to delete) with role admin for the whole organization',
  frozen: 'A change freeze covers the servers the request would run on: `freezes` (each with `ends_at`) and `servers`; nothing started. A person with role admin may pass `override_freeze`',
  overlap: 'A run of the schedule is still going and its overlap policy (or the one the run-now gave) keeps another from starting: `run_ids` names them; the run-now is recorded as a tick skipped for `overlap`',
  expired: 'The approval gate expired before this decision',
  not_awaiting_approval: 'The run is not waiting at an approval gate',
  already_approved: 'This person has already approved this gate',
  payload_too_large: 'The body is over BODY_LIMIT_BYTES',
  unsupported_media_type: 'The body is not `application/json` (UTF-8)',
  validation_failed: 'Invalid fields, parameters or headers, or unknown fields; `details` names each',
  rate_limited: 'Over RATE_LIMIT_PER_MINUTE (requests per token, failed authentications per address), or a trigger over ORG_MAX_ACTIVE_RUNS; retry after `Retry-After` seconds',
  internal_error: 'A bug: no internals are revealed; the log has the request id',
  service_unavailable: 'Temporal cannot be reached, or no worker took a decision on a step in time; try again',
};

const AUTHENTICATED_ERRORS: ErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited'];
/** What a body can earn before its route reads it: the API reads the body of every POST, PUT and PATCH (and ignores that of a GET or DELETE). */
const BODY_ERRORS: ErrorCode[] = ['malformed_json', 'payload_too_large', 'unsupported_media_type', 'validation_failed'];
const WRITES = new Set<Operation['method']>(['post', 'put', 'patch']);

/**
 * Converts zod schemas to JSON Schema 2020-12 (OpenAPI 3.1's dialect). Schemas given an `id` with
 * `.meta()` become components, referenced wherever they are used.
 */
class SchemaCollector {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    // Refinements and transforms have no JSON Schema: the document states the shape, the route still checks them.
    const { $schema: _dialect, $defs, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
    for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      const named = this.relink(definition);
      const known = this.components[id];
      if (known && JSON.stringify(known) !== JSON.stringify(named)) throw new Error(`Two different schemas share the OpenAPI component id "${id}"`);
      this.components[id] = named;
    }
    return this.relink(json);
  }

  private relink(json: JsonSchema): JsonSchema {
    return JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
  }
}

const openApiPath = (expressPath: string) => expressPath.replace(/:(\w+)/g, '{$1}');

function parameters(collector: SchemaCollector, op: Operation) {
  const list: JsonSchema[] = [];
  const add = (where: 'path' | 'header', entries: Record<string, Parameter> = {}) => {
    for (const [name, p] of Object.entries(entries)) {
      list.push({ name, in: where, required: where === 'path' || !!p.required, description: p.description, schema: collector.convert(p.schema, where === 'path' ? 'output' : 'input') });
    }
  };
  // A path parameter, like a query parameter, is documented as what the route parses it to (a step number: an integer).
  add('path', op.params);
  if (op.query) {
    // A query parameter is a string that the route parses: documented as what it parses to, optional when it has a default.
    const parsed = collector.convert(op.query, 'output') as { properties: Record<string, JsonSchema> };
    const given = collector.convert(op.query, 'input') as { required?: string[] };
    for (const [name, schema] of Object.entries(parsed.properties)) {
      list.push({ name, in: 'query', required: given.required?.includes(name) ?? false, schema, ...(schema.description ? { description: schema.description } : {}) });
    }
  }
  add('header', op.headers);
  return list;
}

function response(collector: SchemaCollector, spec: ResponseSpec) {
  return {
    description: spec.description,
    ...(spec.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(spec.headers).map(([name, h]) => [name, { description: h.description, required: !!h.required, schema: collector.convert(h.schema, 'output') }]),
          ),
        }
      : {}),
    ...(spec.body
      ? {
          content: Object.fromEntries(
            Object.entries({ [spec.contentType ?? 'application/json']: spec.body, ...spec.alternatives }).map(([type, body]) => [type, { schema: collector.convert(body, 'output') }]),
          ),
        }
      : {}),
  };
}

const errorDescription = (code: ErrorCode, beyondSchema?: string[]) =>
  `\`${code}\`: ${ERROR_WHEN[code]}${code === 'validation_failed' && beyondSchema ? `. Also refused although the schema allows it: ${beyondSchema.join('; ')}` : ''}`;

function errorResponses() {
  return Object.fromEntries(
    (Object.keys(ERROR_WHEN) as ErrorCode[]).map((code) => [
      code,
      {
        description: errorDescription(code),
        ...(code === 'rate_limited' ? { headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } } : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  );
}

/**
 * The answer of one error status: the shared response of its code, or, when two codes share the
 * status (400: bad percent-encoding, malformed JSON), the route refuses more than its schema says
 * (422), or the route answers some of the status in its own form too (`own`: MCP's JSON-RPC errors),
 * one response describing each, its body either form.
 */
function errorResponse(collector: SchemaCollector, codes: ErrorCode[], beyondSchema?: string[], own?: ResponseSpec) {
  if (codes.length === 1 && !own?.body && !(codes[0] === 'validation_failed' && beyondSchema)) return { $ref: `#/components/responses/${codes[0]}` };
  const error = { $ref: '#/components/schemas/Error' };
  return {
    description: [...codes.map((code) => errorDescription(code, beyondSchema)), ...(own?.body ? [own.description] : [])].join('; or '),
    content: { 'application/json': { schema: own?.body ? { anyOf: [error, collector.convert(own.body, 'output')] } : error } },
  };
}

function operationObject(collector: SchemaCollector, op: Operation) {
  const readsBody = !!op.body || (!!op.scope && WRITES.has(op.method));
  const errors = new Set<ErrorCode>([...(op.scope ? AUTHENTICATED_ERRORS : []), ...(op.params ? ['bad_request' as const] : []), ...(readsBody ? BODY_ERRORS : []), ...op.errors]);
  if (op.beyondSchema && !errors.has('validation_failed')) throw new Error(`${op.operationId} refuses more than its schema says but documents no 422`);
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(op.responses)) responses[status] = response(collector, spec);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...errors].sort((a, b) => statusOf(a) - statusOf(b))) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  for (const [status, codes] of byStatus) responses[status] = errorResponse(collector, codes, op.beyondSchema, op.responses[status]);
  const scopeNote =
    op.scope === 'any'
      ? '\n\nAny authenticated caller.'
      : op.scope
        ? `\n\nNeeds \`${op.scope}\`: a role that grants it ${op.everywhere ? 'for the whole organization' : 'on every server (and the deployment) the request touches'}, and a token whose scopes allow it (\`admin\` narrows nothing).`
        : op.security
          ? ''
          : '\n\nNo authentication.';
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: `${op.description ?? ''}${scopeNote}`.trim(),
    tags: [op.tag],
    // OpenAPI 3.1 lets a non-OAuth scheme list the roles it needs: here, the token's scope. Or the console's session, with its token's scopes.
    security: op.scope ? [{ bearerAuth: op.scope === 'any' ? [] : [op.scope] }, { consoleSession: [] }] : (op.security ?? []),
    ...(op.params || op.query || op.headers ? { parameters: parameters(collector, op) } : {}),
    ...(op.body ? { requestBody: { required: op.body.required, content: { 'application/json': { schema: collector.convert(op.body.schema, 'input') } } } } : {}),
    responses,
  };
}

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
  tags: Array<{ name: string; description: string }>;
}

/** The OpenAPI 3.1 document of `operations`: request schemas in their input form, responses in their output form. */
export function buildOpenApiDocument(operations: Operation[], info: DocumentInfo) {
  const collector = new SchemaCollector();
  collector.convert(errorBodySchema, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = (paths[openApiPath(op.path)] ??= {});
    if (path[op.method]) throw new Error(`${op.method.toUpperCase()} ${op.path} is described twice`);
    path[op.method] = operationObject(collector, op);
  }
  return {
    openapi: '3.1.1',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: '/' }],
    tags: info.tags,
    paths,
    components: {
      schemas: collector.components,
      responses: errorResponses(),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token (`bsn_…`): `bosun tokens create`, or the one `npm start` prints on the first start' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when it is set' },
        consoleSession: { type: 'apiKey', in: 'cookie', name: 'bosun_session', description: 'The console’s session (POST /api/v1/session); every API route takes it instead of a bearer token, writes with `X-CSRF-Token`' },
      },
    },
  };
}
