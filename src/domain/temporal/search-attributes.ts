import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes';

/** `--search-attribute` flags for `temporal server start-dev`. */
export const devServerSearchAttributeFlags = () =>
  Object.values(SEARCH_ATTRIBUTES).flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]);

/** Registers Bosun's search attributes on an external Temporal cluster; already-registered ones are left alone. */
export async function ensureSearchAttributes(client: Client, namespace: string): Promise<void> {
  const { customAttributes } = await client.connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(SEARCH_ATTRIBUTES).filter((key) => !customAttributes?.[key.name]);
  if (!missing.length) return;
  await client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((key) => [key.name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
}
