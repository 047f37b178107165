import { Types } from 'mongoose';
import { randomUUID } from 'node:crypto';
import { parseInventory } from '../../domain/inventory/parse';
import { InventoryParseError } from '../../domain/inventory/inventory';
import { inTransaction } from '../../domain/database';
import { sealCredentials, type ServerCredentials } from '../../domain/servers/credentials';
import { ServerModel } from '../../domain/servers/model';
import { applyInventoryImport, noteVerificationNotStarted, type NewServer } from '../../domain/servers/store';
import type { Principal } from '../../domain/tokens/service';
import { inventoryVerificationWorkflowId } from '../../domain/contracts/workflow-ids';
import { assertOnServers, readableServerFilter } from '../access/gate';
import { ApiError, unlessTemporalUnreachable } from '../http/errors';
import { isDuplicateKey } from '../../domain/database';
import { checkImportRoutes, resolveHops, serverViaFields } from './import-hops';
import { planImport, type ImportPlan, type KnownServer } from './import-plan';
import type { ImportDiff, ImportServersInput } from './import-schemas';
import { checkPrivateKey } from './private-key';
import type { ServerServiceDeps } from './service-deps';

/*
 * `POST /servers/import`: parse (any error: 422 naming the line, nothing changed), diff against the
 * servers of the organization the caller may read, then — unless a dry run — apply it in one
 * transaction and verify the added (and re-addressed) servers, IMPORT_VERIFY_CONCURRENCY at a time.
 */

const TEMPORAL_CHECK_MS = 3000;

function parse(input: ImportServersInput) {
  try {
    return parseInventory(input.format, input.content);
  } catch (error) {
    if (!(error instanceof InventoryParseError)) throw error;
    throw new ApiError('validation_failed', `The inventory cannot be imported: ${error.message}`, [{ path: 'content', message: error.message }]);
  }
}

function credentialsOf(defaults: ImportServersInput['defaults']): { auth_method: 'private_key' | 'password'; credentials: ServerCredentials } {
  const missing = (message: string) => new ApiError('validation_failed', 'The request body is invalid', [{ path: 'defaults', message }]);
  if (defaults.auth_method === 'private_key') {
    if (!defaults.private_key) throw missing('defaults.private_key is needed to add servers with auth_method "private_key"');
    checkPrivateKey(defaults.private_key, defaults.passphrase);
    return { auth_method: 'private_key', credentials: { private_key: defaults.private_key, passphrase: defaults.passphrase } };
  }
  if (defaults.auth_method === 'password') {
    if (!defaults.password) throw missing('defaults.password is needed to add servers with auth_method "password"');
    return { auth_method: 'password', credentials: { password: defaults.password } };
  }
  throw missing('defaults.auth_method ("private_key" or "password") and its credential are needed to add servers');
}

function diffOf(input: ImportServersInput, plan: ImportPlan, hops: Map<string, (string | null)[]>, addedIds: Map<string, Types.ObjectId>, verification: ImportDiff['verification']): ImportDiff {
  return {
    dry_run: input.dry_run,
    source: input.source,
    add: plan.add.map((a) => ({ id: addedIds.get(a.title)?.toString() ?? null, title: a.title, host: a.host, port: a.port, username: a.username, tags: a.tags, via: a.via, via_ids: hops.get(a.title) ?? [], line: a.line })),
    change: plan.change.map((c) => ({ id: c.server._id.toString(), title: c.server.title, fields: c.fields, via: c.desired.via, via_ids: hops.get(c.desired.title) ?? [] })),
    unchanged: plan.unchanged.map((u) => ({ id: u.server._id.toString(), title: u.server.title })),
    missing: plan.missing.map((m) => ({ id: m._id.toString(), title: m.title, host: m.host })),
    warnings: plan.warnings,
    counts: { add: plan.add.length, change: plan.change.length, unchanged: plan.unchanged.length, missing: plan.missing.length },
    verification,
  };
}

export function createServerImport({ secretBox, workflows }: ServerServiceDeps) {
  return async function importServers(principal: Principal, input: ImportServersInput): Promise<ImportDiff> {
    const { organizationId } = principal;
    const parsed = parse(input);
    const known = await ServerModel.find(readableServerFilter(principal), { title: 1, host: 1, port: 1, username: 1, tags: 1, inventory: 1 }).lean<KnownServer[]>();
    const plan = planImport(input.source, parsed.hosts, input.defaults, known, [...parsed.warnings]);
    const addedIds = new Map(input.dry_run ? [] : plan.add.map((a) => [a.title, new Types.ObjectId()] as const));
    const hops = resolveHops(plan, known, addedIds);
    // The routes checked with ids for the servers to add (a dry run's are not shown: they are not the ones applying would give).
    const routeIds = new Map(plan.add.map((a) => [a.title, addedIds.get(a.title) ?? new Types.ObjectId()] as const));
    await checkImportRoutes(organizationId, plan, resolveHops(plan, known, routeIds) as Map<string, string[]>, routeIds);
    assertOnServers(principal, 'servers:write', [
      ...plan.add.map((a) => ({ _id: 'new', title: a.title, tags: a.tags })),
      ...plan.change.flatMap((c) => [c.server, { ...c.server, tags: c.tags }]),
      ...plan.missing,
    ]);
    if (input.dry_run) return diffOf(input, plan, hops, addedIds, null);

    const { auth_method, credentials } = plan.add.length ? credentialsOf(input.defaults) : { auth_method: 'password' as const, credentials: null };
    const readdressed = plan.change.filter((c) => c.fields.host || c.fields.port || c.fields.username);
    const toVerify = [...plan.add.map((a) => ({ id: addedIds.get(a.title)!.toString(), title: a.title, host: a.host, via: hops.get(a.title) ?? [] })), ...readdressed.map((c) => ({ id: c.server._id.toString(), title: c.server.title, host: c.desired.host, via: hops.get(c.desired.title) ?? [] }))];
    // A server behind a jump host this import verifies too is verified after it.
    const verifying = new Set(toVerify.map((s) => s.id));
    // Nothing is changed when the servers could not then be verified.
    if (toVerify.length) await unlessTemporalUnreachable('verify the imported servers', () => workflows.reachability.check(TEMPORAL_CHECK_MS));

    const inventoryOf = (title: string, importTags: string[], via: string[]) => ({ source: input.source, name: title, tags: importTags, via });
    const add: NewServer[] = plan.add.map((a) => {
      const _id = addedIds.get(a.title)!;
      return {
        _id, organization_id: new Types.ObjectId(organizationId), title: a.title, tags: a.tags, host: a.host, port: a.port, username: a.username,
        auth_method, credentials: sealCredentials(secretBox, _id.toString(), credentials!), inventory: inventoryOf(a.title, a.importTags, a.via),
        ...serverViaFields((hops.get(a.title) ?? []) as string[]),
      };
    });
    const change = plan.change.map((c) => ({
      id: c.server._id,
      details: {
        // The title follows the inventory only when adopting or renaming (a person's own title stays).
        ...(c.fields.title ? { title: c.desired.title } : {}),
        host: c.desired.host, port: c.desired.port, username: c.desired.username, tags: c.tags,
        inventory: inventoryOf(c.desired.title, c.desired.importTags, c.desired.via), ...serverViaFields((hops.get(c.desired.title) ?? []) as string[]),
      },
    }));
    try {
      await inTransaction((session) => applyInventoryImport(organizationId, { add, change, quarantine: plan.missing.map((m) => m._id) }, session));
    } catch (error) {
      if (isDuplicateKey(error)) throw new ApiError('conflict', 'A server being imported has the user@host:port of another server of this organization (added since, or outside your reach)');
      throw error;
    }

    const importId = randomUUID();
    if (toVerify.length) {
      try {
        await workflows.servers.verifyImported(importId, organizationId, input.source, toVerify.map(({ via, ...s }) => ({ ...s, organizationId, after: via.filter((hop): hop is string => !!hop && verifying.has(hop)) })));
      } catch (error) {
        await noteVerificationNotStarted(toVerify.map((s) => s.id), 'Imported, but its verification could not start (Temporal unreachable): verify it again');
        throw Object.assign(new ApiError('service_unavailable', 'The import was applied, but verification of its servers could not start (Temporal is unreachable): verify them again'), { cause: error });
      }
    }
    const verification = toVerify.length ? { workflow_id: inventoryVerificationWorkflowId(importId), servers: toVerify.length, concurrency: workflows.servers.importConcurrency } : null;
    return diffOf(input, plan, hops, addedIds, verification);
  };
}

export type ServerImport = ReturnType<typeof createServerImport>;
