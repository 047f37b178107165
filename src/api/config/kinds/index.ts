import type { KindAdapter } from '../../../domain/config/types';
import type { ScheduleWorkflows } from '../../../domain/temporal/schedules';
import { deploymentKind } from './deployment';
import { pipelineKind } from './pipeline';
import { scheduleKind } from './schedule';

/** What the adapters need beyond MongoDB: Temporal Schedules followed after an apply. */
export interface ConfigAdapterDeps {
  schedules: ScheduleWorkflows;
  minIntervalSeconds: number;
}

/** Every kind's adapter, in the order an apply writes them (what others reference first). */
export function configAdapters({ schedules, minIntervalSeconds }: ConfigAdapterDeps): KindAdapter[] {
  return [deploymentKind({ schedules }), pipelineKind({ schedules }), scheduleKind({ schedules, minIntervalSeconds })];
}

/** A plan's or apply's body at most: the files whole (each at most 5 MiB, checked by the files layer). */
export const CONFIG_BODY_LIMIT_BYTES = 32 * 1024 * 1024;
