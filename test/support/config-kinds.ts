import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import mongoose, { Types } from 'mongoose';
import { loadNames, type PlannedName } from '../../src/api/config/names';
import type { ApplyContext, CheckContext, CurrentObject, KindAdapter, ManagedBy } from '../../src/domain/config/types';
import { inTransaction } from '../../src/domain/database';
import { OrganizationModel } from '../../src/domain/organizations/model';
import { OrganizationSecretModel } from '../../src/domain/secrets/model';
import type { Principal } from '../../src/domain/tokens/service';
import type { User } from './client';
import { createFreezeKind } from '../../src/api/config/kinds/freeze';
import { createNotificationChannelKind } from '../../src/api/config/kinds/notification-channel';
import { policyKind } from '../../src/api/config/kinds/policy';
import { roleBindingKind } from '../../src/api/config/kinds/role-binding';
import { serviceAccountKind } from '../../src/api/config/kinds/service-account';
import { teamKind } from '../../src/api/config/kinds/team';
import { deploymentRunWorkflowId, FREEZES_CHANGED_SIGNAL } from '../../src/domain/contracts/workflow-ids';
import { parseMasterKey, SecretBox } from '../../src/domain/secrets/secret-box';
import { createLogger } from '../../src/logger';

/*
 * Kind adapters (src/api/config/kinds/) driven as the plan and apply drive them, on a shared Bosun's
 * database: this test process connects to it, reads names and secrets, checks specs and writes them
 * in one transaction. What is written is then read through the HTTP API.
 */

/** The test process on the shared Bosun's database (the adapters use the default mongoose connection). */
export async function connectTo(mongoUri: string) {
  await mongoose.connect(mongoUri);
  return () => mongoose.disconnect();
}

/** An organization's id, and the admin principal of a user (as the API would build it for their token). */
export async function adminOf(user: User, slug: string): Promise<{ organizationId: string; principal: Principal }> {
  const organizationId = (await OrganizationModel.findOne({ slug }, { _id: 1 }).lean().orFail())._id.toString();
  const me = (await user.request('get', '/me')).body.data;
  const principal: Principal = { organizationId, identity: me.identity, teams: [], grants: [], tokenId: me.token?.id ?? null, tokenName: me.token?.name ?? null, sessionId: null, scopes: ['admin'], expiresAt: null };
  return { organizationId, principal };
}

/** What a plan checks a spec with: the organization's names (and the planned ones), its secrets, the object of this name. */
export async function checkContext(organizationId: string, current: CurrentObject | null = null, planned: PlannedName[] = []): Promise<CheckContext> {
  const secrets = await OrganizationSecretModel.find({ organization_id: organizationId }, { name: 1 }).lean();
  return { organizationId, names: await loadNames(organizationId, planned), secrets: new Set(secrets.map((s) => s.name)), current };
}

/** `managed_by` as an apply of `source` sets it. */
export const managedBy = (path: string, spec: Record<string, unknown>, source = 'platform-repo'): ManagedBy => ({
  source,
  revision: '3f2a1c0e',
  path,
  url: null,
  applied_at: new Date(),
  spec_hash: createHash('sha256').update(JSON.stringify(spec)).digest('hex'),
  forced_at: null,
  forced_by: null,
});

/** Writes (and removes) objects in one transaction, as an apply does. */
export async function applyInTransaction(
  organizationId: string,
  principal: Principal,
  writes: Array<{ adapter: KindAdapter; name: string; spec: Record<string, unknown>; id?: string; path?: string }>,
  removes: Array<{ adapter: KindAdapter; id: string }> = [],
  planned: PlannedName[] = [],
): Promise<string[]> {
  const names = await loadNames(organizationId, planned);
  return inTransaction(async (session) => {
    const context: ApplyContext = { organizationId, session, names, principal, now: new Date() };
    const ids: string[] = [];
    for (const { adapter, name, spec, id, path = 'bosun/all.yaml' } of writes) {
      const objectId = id ?? names.idOf(adapter.kind, name) ?? new Types.ObjectId().toString();
      await adapter.write(context, { id: objectId, name, spec, existing: names.idOf(adapter.kind, name) === objectId && !planned.some((p) => p.id === objectId), managed_by: managedBy(path, spec) });
      ids.push(objectId);
    }
    for (const { adapter, id } of removes) await adapter.remove(context, id);
    return ids;
  });
}

/** The adapters of kinds B, as the shared Bosun would build them: its master key, its runs' workflows. */
export function kindsB(bosun: { secretKey: string; temporal: Client }) {
  const workflows = { freezesChanged: async (runId: string) => bosun.temporal.workflow.getHandle(deploymentRunWorkflowId(runId)).signal(FREEZES_CHANGED_SIGNAL) };
  return {
    freeze: createFreezeKind({ workflows, log: createLogger('warn') }),
    policy: policyKind,
    team: teamKind,
    serviceAccount: serviceAccountKind,
    roleBinding: roleBindingKind,
    channel: createNotificationChannelKind({ secretBox: new SecretBox(parseMasterKey(bosun.secretKey)) }),
  };
}
