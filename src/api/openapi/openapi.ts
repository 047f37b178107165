import { z } from 'zod';
import type { Operation } from './operation';

/** Where the document is served (the reference page at /docs loads it from there). */
export const OPENAPI_PATH = '/api/v1/openapi.json';

/** The document's own route, as the document describes it. */
export const referenceOperations: Operation[] = [
  {
    method: 'get', path: OPENAPI_PATH, operationId: 'getOpenApiDocument', tag: 'Reference', scope: null,
    summary: 'This document',
    description: 'The OpenAPI 3.1 document of the API, generated from the schemas the routes validate with. The reference page at `/docs` renders it.',
    responses: { 200: { description: 'The OpenAPI document', body: z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }) } },
    errors: [],
  },
];
