import { recordIntent, recordOutcome } from '../../domain/audit/pending-entries';
import { ConfigLimitError } from '../../domain/config/files';
import { fetchRepositoryFiles, RepositoryError, type FetchedRepository } from '../../domain/config/git';
import { loadSourceForSync, recordSyncFailed, recordSyncSucceeded, SourceCredentialsUnreadableError, type ConfigSource, type PlanSummary } from '../../domain/config-sources/store';
import type { KindAdapter } from '../../domain/config/types';
import type { ConfigSourceSyncer, ConfigSyncFailureCode, ConfigSyncOutcome } from '../../domain/contracts/config-sync';
import type { SecretBox } from '../../domain/secrets/secret-box';
import { actAsServiceAccount, type Principal } from '../../domain/tokens/service';
import type { Logger } from '../../logger';
import { ApiError } from '../http/errors';
import { applyConfig } from './apply';
import { planConfig } from './plan';
import type { Plan } from './schemas';

/*
 * A config source's sync, as the worker's activity runs it: the repository fetched at its ref, the
 * files planned as the source's service account, and a plan without errors applied bound to its
 * plan_hash (one transaction: a crash redoes it, never half). Every outcome lands on the source's
 * status through its store; a failure there is also a `config.sync_failed` event.
 */

/** How many of a failed plan's problems its status and event quote (the count says how many in all). */
const QUOTED_PROBLEMS = 20;
const IN_MESSAGE = 3;

export interface ConfigSyncDeps {
  secretBox: SecretBox;
  adapters: readonly KindAdapter[];
  log: Logger;
  /** How long one fetch may take. */
  fetchTimeoutMs: number;
}

const summaryOf = (plan: Plan): PlanSummary => ({
  revision: plan.revision,
  plan_hash: plan.plan_hash,
  create: plan.create.length,
  update: plan.update.length,
  delete: plan.delete.length,
  unchanged: plan.unchanged.length,
  errors: plan.errors.slice(0, QUOTED_PROBLEMS).map((e) => e.text),
  error_count: plan.errors.length,
  drift: plan.drift,
});

const short = (revision: string) => revision.slice(0, 7);

/** An apply's refusals of a clean plan that only other files mend (a plan that moved meanwhile is retried instead). */
const APPLY_REFUSALS = new Set(['conflict', 'validation_failed']);

export function configSourceSyncer({ secretBox, adapters, log, fetchTimeoutMs }: ConfigSyncDeps): ConfigSourceSyncer {
  async function failed(sourceId: string, code: ConfigSyncFailureCode, message: string, more: { revision?: string | null; plan?: PlanSummary; offered?: { key: string; fingerprint: string } | null } = {}): Promise<ConfigSyncOutcome> {
    const revision = more.revision ?? null;
    await recordSyncFailed(sourceId, { code, message, revision, plan: more.plan ?? null, offered: more.offered ?? null });
    return { outcome: 'failed', code, message, revision };
  }

  async function fetched(source: ConfigSource, credentials: Parameters<typeof fetchRepositoryFiles>[0]['credentials'], signal: AbortSignal): Promise<FetchedRepository | RepositoryError> {
    try {
      return await fetchRepositoryFiles({ url: source.git.url, ref: source.git.ref, path: source.git.path ?? '', credentials, hostKey: source.host_key ?? null, timeoutMs: fetchTimeoutMs, signal });
    } catch (error) {
      if (error instanceof RepositoryError) return error;
      throw error;
    }
  }

  /** The apply, as the source's service account, with its audit entry (which names the revision before it, a force-push's too). */
  async function apply(principal: Principal, source: ConfigSource, request: { source: string; revision: string; files: FetchedRepository['files']; prune: boolean; web_url: string | null }, plan: Plan) {
    const sourceId = source._id.toString();
    const audit = await recordIntent(
      {
        organizationId: principal.organizationId,
        actor: { type: 'service_account', id: principal.identity.id, name: principal.identity.name, token_id: null },
        action: 'config.apply',
        target: { kind: 'config_source', id: sourceId, name: source.name },
        details: { source: source.name, revision: request.revision, sync: true },
      },
      600,
      `config-sync:${sourceId}:${plan.plan_hash}`,
    );
    let applied;
    try {
      applied = await applyConfig(principal, { ...request, plan_hash: plan.plan_hash }, adapters, log);
    } catch (error) {
      // Nothing applied (one transaction): the entry says why rather than waiting to be chained as unknown.
      await recordOutcome(audit, error instanceof ApiError ? error.code : 'failed');
      throw error;
    }
    await recordOutcome(audit, 'ok', { details: { source: source.name, revision: request.revision, previous_revision: applied.previous_revision, created: applied.created, updated: applied.updated, deleted: applied.deleted, sync: true } });
    return applied;
  }

  return {
    async sync(sourceId, signal) {
      let loaded;
      try {
        loaded = await loadSourceForSync(sourceId, secretBox);
      } catch (error) {
        if (error instanceof SourceCredentialsUnreadableError) return failed(sourceId, 'credentials_unreadable', error.message);
        throw error;
      }
      if (!loaded) return { outcome: 'gone' };
      const { source, credentials } = loaded;
      const principal = await actAsServiceAccount(source.run_as.id!.toString());
      if (typeof principal === 'string') return failed(sourceId, 'run_as_unusable', `The service account ${source.run_as.name} it syncs as is ${principal}: name another in run_as`);

      const repository = await fetched(source, credentials, signal);
      if (repository instanceof RepositoryError) return failed(sourceId, repository.code, repository.message, { offered: repository.offered });
      const { revision, files } = repository;
      const request = { source: source.name, revision, files, prune: source.prune, web_url: source.web_url ?? null };
      let plan: Plan;
      try {
        plan = (await planConfig(principal, request, adapters)).view;
      } catch (error) {
        if (error instanceof ConfigLimitError) return failed(sourceId, 'too_large', error.message, { revision });
        if (error instanceof ApiError && error.code === 'forbidden') return failed(sourceId, 'forbidden', `${source.run_as.name} may not apply these files: ${error.message}`, { revision });
        throw error;
      }
      if (plan.errors.length) {
        const quoted = plan.errors.slice(0, IN_MESSAGE).map((e) => e.text).join('; ');
        const more = plan.errors.length > IN_MESSAGE ? `; and ${plan.errors.length - IN_MESSAGE} more` : '';
        const message = `The files at ${short(revision)} have ${plan.errors.length} problem${plan.errors.length > 1 ? 's' : ''}, nothing was applied: ${quoted}${more}`;
        return failed(sourceId, 'plan_failed', message, { revision, plan: summaryOf(plan) });
      }
      if (!plan.create.length && !plan.update.length && !plan.delete.length) {
        await recordSyncSucceeded(sourceId, summaryOf(plan));
        return { outcome: 'unchanged', revision, created: 0, updated: 0, deleted: 0 };
      }
      let applied;
      try {
        applied = await apply(principal, source, request, plan);
      } catch (error) {
        // A rule only the whole apply can check (the last administrator, a stage's parameters): the files must change.
        if (error instanceof ApiError && APPLY_REFUSALS.has(error.code)) return failed(sourceId, 'apply_refused', `The files at ${short(revision)} were refused whole, nothing was applied: ${error.message}`, { revision, plan: summaryOf(plan) });
        throw error;
      }
      await recordSyncSucceeded(sourceId, summaryOf(applied.plan));
      log.info({ sourceId, revision, created: applied.created, updated: applied.updated, deleted: applied.deleted }, 'config source synced');
      return { outcome: 'applied', revision, created: applied.created, updated: applied.updated, deleted: applied.deleted };
    },
  };
}
