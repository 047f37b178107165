/* The events a notification channel can subscribe to: a module of its own, with no dependency, so the console uses the same list. */

/** Every event a channel can subscribe to (`ping` is sent by POST …/test alone, to one channel). */
export const EVENT_TYPES = [
  'run.succeeded',
  'run.failed',
  'run.cancelled',
  'run.awaiting_approval',
  'run.approval_expiring',
  'run.paused',
  'run.rolled_back',
  'conversation.awaiting_approval',
  'conversation.finished',
  'pipeline.succeeded',
  'pipeline.failed',
  'pipeline.awaiting_approval',
  'schedule.tick_skipped',
  'server.offline',
  'server.host_key_changed',
  'audit.checkpoint',
  'config.sync_failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number] | 'ping';
