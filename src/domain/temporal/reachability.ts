import type { Client } from '@temporalio/client';

/** How often triggers have Temporal's frontend checked in the background, and how long a check may take. */
const CHECK_MS = 1000;

/**
 * Whether Temporal looks reachable, without waiting for the network: what the latest check of its
 * frontend found, and whether the latest start or wake went through.
 */
export class Reachability {
  /** Set when a start or wake could not reach Temporal, cleared by the next that did. */
  private lastSendFailed = false;
  /** What the latest check of Temporal's frontend found, and when it was asked. */
  private frontendAnswered = true;
  private lastCheckAt = 0;
  private checking = false;

  constructor(private readonly client: Client) {}

  /** Asks Temporal's frontend for its system info: does it answer within timeoutMs? Throws when not. */
  async check(timeoutMs: number): Promise<void> {
    const { connection } = this.client;
    this.lastCheckAt = Date.now();
    try {
      await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
      this.frontendAnswered = true;
    } catch (error) {
      this.frontendAnswered = false;
      throw error;
    }
  }

  /** A start or wake reached Temporal (true) or could not (false). */
  sent(ok: boolean): void {
    this.lastSendFailed = !ok;
  }

  /**
   * Does Temporal look reachable right now? False when the latest check of its frontend failed (by the
   * readiness endpoint, or the one this asks for in the background at most once a second while
   * triggers come) or the latest start or wake failed: then a trigger waits for its start (and answers
   * 503 if it fails) instead of answering first. Never waits for the network itself.
   */
  looksReachable(): boolean {
    if (!this.checking && Date.now() - this.lastCheckAt >= CHECK_MS) {
      this.checking = true;
      this.check(CHECK_MS)
        .catch(() => undefined)
        .finally(() => {
          this.checking = false;
        });
    }
    return this.frontendAnswered && !this.lastSendFailed;
  }

  /** `send`, whether it reached Temporal noted. */
  async noting<T>(send: Promise<T>): Promise<T> {
    try {
      const result = await send;
      this.sent(true);
      return result;
    } catch (error) {
      this.sent(false);
      throw error;
    }
  }
}
