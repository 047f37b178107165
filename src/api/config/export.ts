import { formatConfigFiles } from '../../domain/config/files';
import { type ConfigFile, type ConfigKind, type KindAdapter } from '../../domain/config/types';
import type { Principal } from '../../domain/tokens/service';
import { assertMayExportKind, mayReadKind } from '../access/gate';
import { loadNames } from './names';

/**
 * The organization's definitions as files in the format apply reads: ids as names, secrets as their
 * `${secret:NAME}` references, canonical specs (so export → apply elsewhere → export is the same bytes).
 */
export async function exportConfig(principal: Principal, adapters: readonly KindAdapter[], kinds?: readonly ConfigKind[]): Promise<ConfigFile[]> {
  // Kinds named are the caller's to read or refused; without, every kind the caller may read.
  const chosen = kinds ? adapters.filter((adapter) => kinds.includes(adapter.kind)) : adapters.filter((adapter) => mayReadKind(principal, adapter.kind));
  for (const adapter of chosen) assertMayExportKind(principal, adapter.kind);
  const names = await loadNames(principal.organizationId);
  const objects = await Promise.all(chosen.map(async (adapter) => (await adapter.current(principal.organizationId, names)).map((object) => ({ kind: adapter.kind, name: object.name, spec: object.spec }))));
  return formatConfigFiles(objects.flat());
}
