/*
 * Business ids of Bosun's workflows and the names of their signals and updates: what the API, the
 * worker, the activities and the workflows agree on. Recorded in histories and typed into the
 * Temporal UI by people: never rename one.
 */

/** One verification and one health monitor per server. */
export const serverVerifyWorkflowId = (serverId: string) => `server-verify-${serverId}`;
export const serverHealthWorkflowId = (serverId: string) => `server-health-${serverId}`;
/** One health sweep per organization: every interval, its watched servers checked by one activity (what replaced a monitor per server). */
export const serverHealthSweepWorkflowId = (organizationId: string) => `server-health-sweep-${organizationId}`;
export const inventoryVerificationWorkflowId = (importId: string) => `inventory-verify-${importId}`;

/** One workflow per run: a one-server run's, or a fleet run's (which starts one child per target). */
export const deploymentRunWorkflowId = (runId: string) => `deployment-run-${runId}`;
/** A rollback of a fleet run a person asked for (an automatic one runs in the fleet run's own workflow). */
export const deploymentRollbackWorkflowId = (runId: string) => `deployment-rollback-${runId}`;
/** A fleet run's target with a workflow of its own (fleet runs started before target groups; a rolling window's targets). */
export const fleetTargetWorkflowId = (runId: string, serverId: string) => `deployment-run-${runId}-${serverId}`;
/** A group of a fleet run's batch's targets, run in one workflow (a child of its fleet run's): batch and group from 1. */
export const fleetTargetGroupWorkflowId = (runId: string, batch: number, group: number) => `deployment-run-${runId}-batch-${batch}-group-${group}`;
/** A server's run queue: hands the server's turn to the runs waiting for it, in the order they were placed. */
export const serverRunQueueWorkflowId = (serverId: string) => `server-run-queue-${serverId}`;

/** A server verified (or a worker started) → its organization's health sweep: "there are servers to watch" (signal-with-start). */
export const SERVERS_TO_WATCH_SIGNAL = 'servers-to-watch';

/** Run → queue: "a run waits for its turn" (the run's id; absent in wakes sent before runs named themselves). */
export const WAKE_QUEUE_SIGNAL = 'wake';
/** Queue → run: "your turn on this server" (to a target group's workflow, the run's id). */
export const TURN_SIGNAL = 'turn';
/** Run → queue: "done with this server" (the run's id), for a turn the queue gave. */
export const RELEASED_SIGNAL = 'released';

/** Person → fleet run: an approval or a rejection of the gate it waits at (an update: refused at once when it does not wait). */
export const GATE_DECISION_UPDATE = 'gate-decision';
/** Person → fleet run: pause between batches, or resume (updates). */
export const PAUSE_UPDATE = 'pause';
export const RESUME_UPDATE = 'resume';
/** API → frozen fleet run: "the freezes changed (edited or deleted): check again now" (its timer re-checks anyway). */
export const FREEZES_CHANGED_SIGNAL = 'freezes-changed';

/** A Bosun schedule's Temporal Schedule; the tick workflows it starts are named after it (Temporal appends the due time). */
export const temporalScheduleId = (scheduleId: string) => `bosun-schedule-${scheduleId}`;
export const scheduledRunWorkflowId = (scheduleId: string) => `bosun-schedule-${scheduleId}-tick`;
/** A run-now a person asked for: the same workflow as a tick, started by the API. */
export const requestedRunWorkflowId = (scheduleId: string, requestedAt: string) => `bosun-schedule-${scheduleId}-now-${requestedAt}`;
/** The one run-now of a schedule waiting for its earlier runs to end (overlap buffer_one). */
export const bufferedRunWorkflowId = (scheduleId: string) => `bosun-schedule-${scheduleId}-now-buffered`;

/** One workflow per conversation, planning each instruction and running its steps in order. */
export const conversationWorkflowId = (conversationId: string) => `conversation-${conversationId}`;
export const CONVERSATION_MESSAGE_SIGNAL = 'message';
export const STEP_DECISION_UPDATE = 'decide';

/** The one notification dispatcher of a Bosun (its task queue names it: Bosuns sharing a namespace each have theirs). */
export const notificationDispatchWorkflowId = (taskQueue: string) => `notification-dispatch-${taskQueue}`;
/** One delivery workflow per channel and subject (a run, a conversation, a server…): its events go out in order. */
export const notificationDeliveryWorkflowId = (channelId: string, subject: { kind: string; id: string }) => `notify-${channelId}-${subject.kind}-${subject.id}`;
/** Dispatcher → delivery workflow: "send this delivery (this round of it) after those before it". */
export const DELIVER_SIGNAL = 'deliver';
/** The audit trail's one chainer and its checkpoints: one each per task queue (`bosun-audit-chain` with the default queue). */
export const auditChainWorkflowId = (taskQueue: string) => `${taskQueue}-audit-chain`;
export const auditCheckpointWorkflowId = (taskQueue: string) => `${taskQueue}-audit-checkpoints`;

/** One sync of a config source at a time; its Temporal Schedule's ticks start it (Temporal appends the due time to theirs). */
export const configSyncWorkflowId = (sourceId: string) => `config-sync-${sourceId}`;
export const configSourceScheduleId = (sourceId: string) => `bosun-config-source-${sourceId}`;
export const configSyncTickWorkflowId = (sourceId: string) => `config-sync-${sourceId}-tick`;
