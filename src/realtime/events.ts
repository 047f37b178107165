/** The Socket.IO contract, shared by the server, the CLI and the tests. */

export interface RunStepState {
  name: string;
  status: string;
  exit_code: number | null;
  attempts: number;
  started_at: string | null;
  completed_at: string | null;
}

/** One persisted change of a run: its state after the change, and the output the change appended. */
export interface DeploymentRunUpdatedEvent {
  run_id: string;
  deployment_id: string;
  /** Per run, +1 for every change; a client that sees a gap re-reads the run over HTTP. */
  seq: number;
  status: string;
  started_at: string | null;
  completed_at: string | null;
  steps: RunStepState[];
  /**
   * Output appended by this change, already redacted. `offset` counts the characters the step had
   * streamed before it, so a client that already printed past it can skip what it has seen.
   */
  output: { step: number; step_name: string; offset: number; data: string } | null;
}

export type Ack<T> = (response: { ok: true; data: T } | { ok: false; error: { code: string; message: string } }) => void;

export interface ClientToServerEvents {
  /** Start receiving a run's events; the answer is the run as GET returns it, with its current `seq`. */
  subscribe: (request: { run_id: string }, ack: Ack<{ seq: number; run: unknown }>) => void;
  unsubscribe: (request: { run_id: string }, ack?: Ack<null>) => void;
}

export interface ServerToClientEvents {
  DeploymentRunUpdated: (event: DeploymentRunUpdatedEvent) => void;
}

export const runRoom = (runId: string) => `run:${runId}`;
