import type { KindAdapter } from '../../../domain/config/types';
import type { SecretBox } from '../../../domain/secrets/secret-box';
import type { RunWorkflows } from '../../../domain/temporal/run-workflows';
import type { ScheduleWorkflows } from '../../../domain/temporal/schedules';
import type { Logger } from '../../../logger';
import { deploymentKind } from './deployment';
import { createFreezeKind } from './freeze';
import { createNotificationChannelKind } from './notification-channel';
import { pipelineKind } from './pipeline';
import { policyKind } from './policy';
import { roleBindingKind } from './role-binding';
import { scheduleKind } from './schedule';
import { serviceAccountKind } from './service-account';
import { teamKind } from './team';

/** What the adapters need beyond MongoDB: Temporal Schedules and frozen runs followed after an apply, secrets opened. */
export interface ConfigAdapterDeps {
  schedules: ScheduleWorkflows;
  runs: Pick<RunWorkflows, 'freezesChanged'>;
  secretBox: SecretBox;
  minIntervalSeconds: number;
  log: Logger;
}

/** Every kind's adapter, in the order an apply writes them (what others reference first). */
export function configAdapters({ schedules, runs, secretBox, minIntervalSeconds, log }: ConfigAdapterDeps): KindAdapter[] {
  return [
    serviceAccountKind,
    teamKind,
    deploymentKind({ schedules }),
    pipelineKind({ schedules }),
    scheduleKind({ schedules, minIntervalSeconds }),
    createFreezeKind({ workflows: runs, log }),
    roleBindingKind,
    createNotificationChannelKind({ secretBox }),
    policyKind,
  ];
}

/** A plan's or apply's body at most: the files whole (each at most 5 MiB, checked by the files layer). */
export const CONFIG_BODY_LIMIT_BYTES = 32 * 1024 * 1024;
