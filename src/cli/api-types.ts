/**
 * The API's shapes the CLI reads, as the API's own zod schemas define them (as the console's
 * api-types.ts does). Type-only: nothing of the server is loaded by the compiled CLI.
 */
import type { z } from 'zod';
import type { runSchema } from '../api/deployments/views/runs';
import type { runTargetDetailSchema } from '../api/deployments/views/targets';
import type { pipelineSchema } from '../api/pipelines/views';
import type { PipelineRunView } from '../api/pipelines/run-views';
import type { scheduleSchema, tickSchema } from '../api/schedules/views';

export type Run = z.infer<typeof runSchema>;
export type RunTargetDetail = z.infer<typeof runTargetDetailSchema>;

export type Schedule = z.infer<typeof scheduleSchema>;
export type ScheduleTick = z.infer<typeof tickSchema>;

export type Pipeline = z.infer<typeof pipelineSchema>;
export type PipelineRun = PipelineRunView;
export type PipelineRunStage = PipelineRun['stages'][number];
