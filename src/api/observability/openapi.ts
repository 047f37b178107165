import { z } from 'zod';
import type { Operation } from '../openapi/operation';
import type { CheckResult } from './readiness';

const tag = 'Operations';

const readinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.record(z.string(), z.enum(['ok', 'timeout', 'failed']) satisfies z.ZodType<CheckResult>).describe('Each dependency: mongodb, temporal'),
  })
  .meta({ id: 'Readiness' });

export const observabilityOperations: Operation[] = [
  {
    method: 'get', path: '/', operationId: 'getHome', tag, scope: null,
    summary: 'Where things are',
    description: 'Links to the API, its reference (/docs), this document, health, readiness and metrics. A browser (Accept: text/html) gets the web console instead.',
    responses: {
      200: {
        description: 'The links',
        body: z.object({ name: z.literal('Bosun'), description: z.string(), links: z.record(z.string(), z.string()).describe('api, docs, openapi, health, ready, metrics') }),
        alternatives: { 'text/html': z.string().describe('For `Accept: text/html`: the web console') },
      },
    },
    errors: [],
  },
  {
    method: 'get', path: '/healthz', operationId: 'getHealth', tag, scope: null,
    summary: 'Is the process up?',
    responses: { 200: { description: 'Up', body: z.object({ status: z.literal('ok') }) } },
    errors: [],
  },
  {
    method: 'get', path: '/readyz', operationId: 'getReadiness', tag, scope: null,
    summary: 'Do MongoDB and Temporal answer?',
    description: 'Each check is bounded by 2 s.',
    responses: {
      200: { description: 'Ready', body: readinessSchema },
      503: { description: 'A dependency does not answer', body: readinessSchema },
    },
    errors: [],
  },
  {
    method: 'get', path: '/metrics', operationId: 'getMetrics', tag, scope: null,
    summary: 'Prometheus metrics',
    description: 'The text exposition format. With METRICS_TOKEN set, send it as a bearer token.',
    security: [{}, { metricsToken: [] }],
    responses: { 200: { description: 'The metrics', body: z.string(), contentType: 'text/plain' } },
    errors: ['unauthorized'],
  },
];
