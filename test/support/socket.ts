import { io, type Socket } from 'socket.io-client';
import type {
  ClientToServerEvents,
  ConversationStepUpdatedEvent,
  ConversationUpdatedEvent,
  DeploymentRunUpdatedEvent,
  ServerToClientEvents,
} from '../../src/domain/events';

export type BosunSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

/** A real socket.io-client connection; resolves once connected, rejects with the server's reason. */
export function connectSocket(url: string, token: string | undefined): Promise<BosunSocket> {
  const socket: BosunSocket = io(url, { auth: token === undefined ? {} : { token }, transports: ['websocket'], reconnection: false });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error) => {
      socket.close();
      reject(error);
    });
  });
}

/**
 * Subscribes to a run and records its events the way a client should: events up to the snapshot's
 * seq are already in the snapshot; later ones must follow it without gaps.
 */
export async function watchRun(socket: BosunSocket, runId: string) {
  const early: DeploymentRunUpdatedEvent[] = [];
  const events: DeploymentRunUpdatedEvent[] = [];
  let snapshotSeq: number | null = null;
  socket.on('DeploymentRunUpdated', (event) => {
    // The run's own changes (a fleet run's targets have their own sequences: see watchFleetRun).
    if (event.run_id !== runId || event.seq === null) return;
    if (snapshotSeq === null) early.push(event);
    else if (event.seq > snapshotSeq) events.push(event);
  });
  const answer = await socket.emitWithAck('subscribe', { run_id: runId });
  if (!answer.ok) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
  snapshotSeq = answer.data.seq;
  events.push(...early.filter((e) => e.seq! > answer.data.seq));
  return { snapshot: answer.data.run as { steps: Array<{ output: string }> }, snapshotSeq, events };
}

/** Subscribes to a conversation and keeps the events that follow the snapshot, as a client should. */
export async function watchConversation(socket: BosunSocket, conversationId: string) {
  const steps: ConversationStepUpdatedEvent[] = [];
  const updates: ConversationUpdatedEvent[] = [];
  socket.on('ConversationStepUpdated', (e) => e.conversation_id === conversationId && steps.push(e));
  socket.on('ConversationUpdated', (e) => e.conversation_id === conversationId && updates.push(e));
  const answer = await socket.emitWithAck('subscribe_conversation', { conversation_id: conversationId });
  if (!answer.ok) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
  const seq = answer.data.seq;
  return {
    seq,
    steps: () => steps.filter((e) => e.seq > seq),
    updates: () => updates.filter((e) => e.seq > seq),
    /** Every seq an event after the snapshot carried, in order: a stream that missed nothing has no gap. */
    seqs: () => [...new Set([...steps, ...updates].filter((e) => e.seq > seq).map((e) => e.seq))].sort((a, b) => a - b),
  };
}
