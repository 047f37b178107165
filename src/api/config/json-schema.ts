import { z } from 'zod';
import type { KindAdapter } from '../../domain/config/types';

/**
 * The JSON Schema of a definition file's documents (`bosun config schema`, for editors' YAML
 * support): one `{ kind, name, spec }` shape per kind, each spec its adapter's file schema as written.
 */
export function documentsJsonSchema(adapters: readonly KindAdapter[]): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Bosun definition document',
    oneOf: adapters.map((adapter) => ({
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'name', 'spec'],
      properties: {
        kind: { const: adapter.kind },
        name: { type: 'string', minLength: 1, maxLength: 128 },
        spec: z.toJSONSchema(adapter.fileSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }),
      },
    })),
  };
}
