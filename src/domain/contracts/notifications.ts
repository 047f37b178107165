/** A delivery as its subject's workflow queues it: a redeliver is a new round of the same delivery. */
export interface DeliveryRef {
  deliveryId: string;
  round: number;
}

/** A notification's first retry wait unless NOTIFICATION_RETRY_SECONDS says otherwise (and for a workflow started before it). */
export const DEFAULT_NOTIFICATION_RETRY_SECONDS = 5;

export interface NotificationDeliveryInput {
  channelId: string;
  subject: { kind: string; id: string };
  /**
   * NOTIFICATION_RETRY_SECONDS of the worker that started it, in ms: the wait before a refused
   * attempt's retry, doubling after. Absent (a workflow started before the setting): 5 s.
   */
  retryInitialMs?: number;
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
