import { Context } from '@temporalio/activity';
import { failure } from '../src/domain/contracts/failure-types';
import { FINAL_SYNC_FAILURES, type ConfigSourceSyncer, type ConfigSyncOutcome } from '../src/domain/contracts/config-sync';

export interface ConfigSyncActivityDeps {
  /** Absent in a worker composed without the API's plan and apply (then a sync cannot run). */
  configSyncer?: ConfigSourceSyncer;
}

const HEARTBEAT_MS = 2000;

/** A config source's sync: the syncer's outcome, or its failure as Temporal should treat it (the status is written either way). */
export function createConfigSyncActivities({ configSyncer }: ConfigSyncActivityDeps) {
  return {
    async syncConfigSource({ sourceId }: { sourceId: string }): Promise<ConfigSyncOutcome> {
      if (!configSyncer) throw new Error('This worker was composed without the plan and apply config sources need');
      const context = Context.current();
      const beating = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
      let outcome: ConfigSyncOutcome;
      try {
        outcome = await configSyncer.sync(sourceId, context.cancellationSignal);
      } finally {
        clearInterval(beating);
      }
      if (outcome.outcome !== 'failed') return outcome;
      const details = [outcome.code, outcome.revision];
      if (FINAL_SYNC_FAILURES.includes(outcome.code)) throw failure('ConfigSyncRefused', `${outcome.code}: ${outcome.message}`, { details });
      throw failure('ConfigSourceUnreachable', `${outcome.code}: ${outcome.message}`, { details });
    },
  };
}

export type ConfigSyncActivities = ReturnType<typeof createConfigSyncActivities>;
