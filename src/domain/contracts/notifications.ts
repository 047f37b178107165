/** A delivery as its subject's workflow queues it: a redeliver is a new round of the same delivery. */
export interface DeliveryRef {
  deliveryId: string;
  round: number;
  /** This round's attempts the dispatcher already made (its first, refused): the workflow goes on from the wait after them. Absent: none. */
  attemptsMade?: number;
}

/** A notification's first retry wait unless NOTIFICATION_RETRY_SECONDS says otherwise (and for a workflow started before it). */
export const DEFAULT_NOTIFICATION_RETRY_SECONDS = 5;
/** The longest wait between two attempts, and how long a delivery is tried before it is dead. */
export const MAX_RETRY_SECONDS = 3600;
export const GIVE_UP_AFTER_SECONDS = 24 * 3600;

/** The wait after attempt `attempt` failed: the first wait, doubling, at most an hour. */
export const retryDelaySeconds = (attempt: number, initialSeconds = DEFAULT_NOTIFICATION_RETRY_SECONDS) => Math.min(initialSeconds * 2 ** (attempt - 1), MAX_RETRY_SECONDS);

/**
 * The retry policy's maximum attempts: as many as start within the 24 h (35 with 1 s first waits, 33
 * with 5 s), or fewer when NOTIFICATION_MAX_ATTEMPTS says so. The delivery is dead after the last one.
 */
export function maxNotificationAttempts(initialSeconds = DEFAULT_NOTIFICATION_RETRY_SECONDS, configured?: number): number {
  let attempts = 1;
  for (let startsAt = 0; startsAt + retryDelaySeconds(attempts, initialSeconds) < GIVE_UP_AFTER_SECONDS; attempts++) startsAt += retryDelaySeconds(attempts, initialSeconds);
  return configured === undefined ? attempts : Math.min(configured, attempts);
}

export interface NotificationDeliveryInput {
  channelId: string;
  subject: { kind: string; id: string };
  /**
   * NOTIFICATION_RETRY_SECONDS of the worker that started it, in ms: the wait before a refused
   * attempt's retry, doubling after. Absent (a workflow started before the setting): 5 s.
   */
  retryInitialMs?: number;
  /** NOTIFICATION_MAX_ATTEMPTS of the worker that started it; absent: as many as start within the 24 h. */
  maxAttempts?: number;
  /** Carried over a continue-as-new: deliveries waiting, in order, and the latest ones done (for de-duplication). */
  pending?: DeliveryRef[];
  done?: string[];
}

export interface NotificationDispatchInput {
  /** How long each drain activity runs before it returns (the workflow then starts the next, or continues as new). */
  drainMs?: number;
}

/** What an attempt came to: sent (2xx), or ended without being sent (a refused address, a 410, a channel gone). */
export type SendOutcome = 'delivered' | 'failed' | 'dropped' | 'skipped';
