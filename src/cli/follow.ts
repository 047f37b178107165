import { io, type Socket } from 'socket.io-client';
import type { ClientToServerEvents, DeploymentRunUpdatedEvent, ServerToClientEvents } from '../domain/events';
import { followRun, type Outcome } from '../domain/follow-run';
import type { Run } from './api-types';
import { DeployExit } from './exit';
import type { BosunApi } from './http';
import { say, type OutputPrinter } from './print';

const FINAL = new Set(['success', 'failed', 'cancelled']);
/** How often the run is read over HTTP while the socket is down, and --timeout checked. */
const POLL_MS = 2000;

/**
 * Follows a run until it ends, printing its output once: live over Socket.IO, applying its events
 * as the shared protocol says (src/domain/follow-run.ts, which the console follows too), read again
 * over HTTP on a gap and polled while the socket is down. Gives up after `timeout` seconds (exit 1).
 */
export function followToEnd({ api, runId, runPath, timeout, printer }: { api: BosunApi; runId: string; runPath: string; timeout?: number; printer: OutputPrinter }): Promise<Run> {
  const readTarget = (serverId: string) => api.readTarget(runPath, serverId);
  const deadline = timeout ? Date.now() + timeout * 1000 : Infinity;
  const follower = followRun<Run>(runId);

  return new Promise<Run>((resolve, reject) => {
    let socket: Socket<ServerToClientEvents, ClientToServerEvents> | undefined;
    let live = false;
    let settled = false;
    const finish = (result: Run | DeployExit) => {
      if (settled) return;
      settled = true;
      socket?.close();
      clearInterval(poller);
      if (result instanceof DeployExit) reject(result);
      else resolve(result);
    };

    /** What an event shows: a fleet target's progress and output, or the run's; what was missed is read again. */
    const show = (event: DeploymentRunUpdatedEvent, outcome: Outcome) => {
      if (outcome === 'held' || outcome === 'ignored') return;
      if (event.target) {
        // A fleet run's target: its own sequence, its own output.
        if (event.output) printer.chunk(event.target.title, event.output.step, event.output.offset, event.output.data);
        void printer.target(event.target, readTarget);
        if (outcome === 'gap') void resync();
        return;
      }
      // A missed event, or a chunk past what was printed: the run itself has it all.
      if (outcome === 'gap' || (event.output && !printer.chunk('', event.output.step, event.output.offset, event.output.data))) {
        void resync();
        return;
      }
      event.steps.forEach((s, i) => printer.step('', i, s.name, s.status));
      printer.guards(follower.run);
      if (event.status && FINAL.has(event.status)) void resync();
    };
    /** A whole run (the subscription's snapshot, or read again): printed past what was printed, then the events it held back. */
    const take = async (run: Run) => {
      const held = follower.take(run);
      await printer.catchUp(run, readTarget);
      printer.guards(follower.run);
      for (const { event, outcome } of held) show(event, outcome);
      if (FINAL.has(run.status)) finish(run);
    };
    const resync = () => api.readRun(runPath).then(take).catch((error: unknown) => finish(error instanceof DeployExit ? error : new DeployExit(2, String(error))));
    // Polling stands in while the socket is down (it cannot connect, or reconnects); it also enforces --timeout.
    const poller = setInterval(() => {
      if (Date.now() > deadline) return finish(new DeployExit(1, `Run ${runId} not finished after ${timeout} s (it goes on; poll ${runPath})`));
      if (!live) void resync();
    }, POLL_MS);

    socket = io(api.base, { auth: { token: api.token }, transports: ['websocket'], reconnectionAttempts: 5 });
    socket.on('connect', () => {
      void socket!
        .emitWithAck('subscribe', { run_id: runId })
        .then((answer) => {
          if (!answer.ok) return finish(new DeployExit(2, answer.error.message));
          live = true;
          return take(answer.data.run as Run);
        })
        .catch(() => undefined);
    });
    socket.on('disconnect', () => {
      live = false;
    });
    socket.on('DeploymentRunUpdated', (event) => show(event, follower.apply(event)));
    socket.on('connect_error', (error) => say(`(live updates unavailable: ${error.message}; polling)`));
  });
}
