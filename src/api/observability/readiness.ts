import mongoose from 'mongoose';
import type { WorkflowGateway } from '../../domain/temporal/client';

/** A dependency check: resolves when the dependency answers, throws when it does not. */
export type ReadinessCheck = (timeoutMs: number) => Promise<void>;

export type CheckResult = 'ok' | 'timeout' | 'failed';

class CheckTimeout extends Error {}

/** MongoDB answers a ping, and Temporal's frontend its system info. */
export function readinessChecks(workflows: WorkflowGateway): Record<string, ReadinessCheck> {
  return {
    mongodb: async () => {
      const db = mongoose.connection.db;
      if (!db || mongoose.connection.readyState !== mongoose.ConnectionStates.connected) throw new Error('not connected');
      await db.admin().ping();
    },
    temporal: (timeoutMs) => workflows.reachability.check(timeoutMs),
  };
}

/** Runs every check at once, each bounded by timeoutMs; the reasons of failures are returned apart, for the log. */
export async function runChecks(checks: Record<string, ReadinessCheck>, timeoutMs: number) {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([check(timeoutMs), timeout]);
        return { name, result: 'ok' as CheckResult, error: null };
      } catch (error) {
        return { name, result: (error instanceof CheckTimeout ? 'timeout' : 'failed') as CheckResult, error: (error as Error).message };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return {
    ready: entries.every((e) => e.result === 'ok'),
    checks: Object.fromEntries(entries.map((e) => [e.name, e.result])) as Record<string, CheckResult>,
    errors: Object.fromEntries(entries.filter((e) => e.error !== null).map((e) => [e.name, e.error])) as Record<string, string>,
  };
}
