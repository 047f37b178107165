/**
 * The API's shapes, as its own zod schemas define them (the same ones the OpenAPI document is built
 * from): the console never restates a field by hand. Type-only imports: nothing of the server is bundled.
 */
import type { z } from 'zod';
import type { serverListItemSchema, serverSchema } from '../../api/servers/views';
import type { deploymentListItemSchema, deploymentSchema, planSchema } from '../../api/deployments/views/deployments';
import type { runListItemSchema, runSchema } from '../../api/deployments/views/runs';
import type { runTargetDetailSchema } from '../../api/deployments/views/targets';
import type { ProvidersView, SessionView, SignInFailure } from '../../api/session/schemas';
import type { conversationListItemSchema, conversationSchema } from '../../api/conversations/views';
import type { migrationPlanListItemSchema, migrationPlanSchema } from '../../api/migration-plans/views';
import type { tokenSchema, createdTokenSchema } from '../../api/tokens/views';
import type { activityItemSchema } from '../../api/servers/activity';
import type { importDiffSchema } from '../../api/servers/import-schemas';
import type { policyDocumentSchema } from '../../api/organizations/schemas';
import type { scheduleSchema, tickSchema } from '../../api/schedules/views';
import type { freezeViewSchema } from '../../api/freezes/views';
import type { channelSchema, createdChannelSchema, deliverySchema } from '../../api/notifications/views';
import type { sourceViewSchema } from '../../api/config/source-schemas';
import type { driftedObjectSchema } from '../../api/config/drift';
import type { meSchema, personSchema, roleBindingSchema, serviceAccountSchema, teamSchema } from '../../api/people/views';
import type { approvalWaitSchema, feedRunSchema } from '../../api/deployments/run-feed';
import type { scheduleListedSchema } from '../../api/schedules/views';
import type { pipelineSchema } from '../../api/pipelines/views';
import type { PipelineRunView } from '../../api/pipelines/run-views';

export type { ProvidersView, SessionView, SignInFailure };
export type {
  DeploymentRunUpdatedEvent,
  RunTargetState,
  ServerToClientEvents,
  ClientToServerEvents,
  ConversationStepUpdatedEvent,
  ConversationUpdatedEvent,
  PipelineRunUpdatedEvent,
} from '../../domain/events';
export type ServerListItem = z.infer<typeof serverListItemSchema>;
export type Server = z.infer<typeof serverSchema>;
export type DeploymentListItem = z.infer<typeof deploymentListItemSchema>;
export type Deployment = z.infer<typeof deploymentSchema>;
export type Run = z.infer<typeof runSchema>;
export type RunListItem = z.infer<typeof runListItemSchema>;
export type RunTargetDetail = z.infer<typeof runTargetDetailSchema>;
export type Plan = z.infer<typeof planSchema>;
export type ConversationListItem = z.infer<typeof conversationListItemSchema>;
export type Conversation = z.infer<typeof conversationSchema>;
export type ConversationStep = Conversation['steps'][number];
export type MigrationPlanListItem = z.infer<typeof migrationPlanListItemSchema>;
export type MigrationPlan = z.infer<typeof migrationPlanSchema>;
export type Token = z.infer<typeof tokenSchema>;
export type CreatedToken = z.infer<typeof createdTokenSchema>;
export type ServerActivity = z.infer<typeof activityItemSchema>;
export type ImportDiff = z.infer<typeof importDiffSchema>;
export type Policy = z.infer<typeof policyDocumentSchema>;
export type Person = z.infer<typeof personSchema>;
export type ServiceAccount = z.infer<typeof serviceAccountSchema>;
export type Team = z.infer<typeof teamSchema>;
export type RoleBinding = z.infer<typeof roleBindingSchema>;
export type Me = z.infer<typeof meSchema>;
export type Schedule = z.infer<typeof scheduleSchema>;
export type ScheduleTick = z.infer<typeof tickSchema>;
export type ScheduleListed = z.infer<typeof scheduleListedSchema>;
export type FeedRun = z.infer<typeof feedRunSchema>;
export type ApprovalWait = z.infer<typeof approvalWaitSchema>;
export type Pipeline = z.infer<typeof pipelineSchema>;
export type PipelineRun = PipelineRunView;
export type PipelineRunStage = PipelineRun['stages'][number];

export type Freeze = z.infer<typeof freezeViewSchema>;
export type FreezeWindow = NonNullable<Freeze['next_window']>;
export type NotificationChannel = z.infer<typeof channelSchema>;
export type CreatedNotificationChannel = z.infer<typeof createdChannelSchema>;
export type NotificationDelivery = z.infer<typeof deliverySchema>;
export interface Page<T> {
  data: T[];
  meta: { current_page: number; per_page: number; total: number; last_page: number };
}

/** Statuses that never change again. */
export const FINISHED = new Set(['success', 'failed', 'cancelled', 'skipped', 'completed']);

/** A conversation's statuses that never change again. */
export const CONVERSATION_ENDED = new Set(['completed', 'failed', 'cancelled']);

export type ConfigSource = z.infer<typeof sourceViewSchema>;
export type DriftedObject = z.infer<typeof driftedObjectSchema>;
