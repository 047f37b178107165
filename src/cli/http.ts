import { DeployExit } from './exit';
import type { Run, RunTargetDetail } from './api-types';

const ATTEMPTS = 4;

/** The error's message, and what each of its details says (a parameter missing, say). */
export const errorMessage = (body: Record<string, unknown>) => {
  const error = body.error as { message?: string; details?: Array<{ path?: string; message?: string }> } | undefined;
  if (!error?.message) return JSON.stringify(body);
  const details = (error.details ?? []).map((d) => `${d.path ? `${d.path}: ` : ''}${d.message ?? ''}`);
  return details.length ? `${error.message} (${details.join('; ')})` : error.message;
};

/** The API at `base` (without /api/v1), called with `token`. */
export function bosunApi(base: string, token: string) {
  /** One call: its status and JSON body. Connection errors and 5xx are tried again; Bosun still unreachable is exit 2. */
  async function request(method: string, path: string, headers: Record<string, string> = {}, payload?: unknown) {
    let lastError: unknown;
    // Retried with the same headers (the same idempotency key), so never a second run.
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      try {
        const res = await fetch(`${base}/api/v1${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
          body: payload === undefined ? undefined : JSON.stringify(payload),
          signal: AbortSignal.timeout(30_000),
        });
        const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
        if (res.status < 500) return { status: res.status, body };
        lastError = new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
      } catch (error) {
        lastError = error;
      }
      if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
    }
    throw new DeployExit(2, `Cannot reach Bosun at ${base}: ${(lastError as Error).message}`);
  }

  return {
    base,
    token,
    request,

    /** A run as GET shows it (`runPath`: /deployments/{id}/runs/{run_id}); exit 2 when it cannot be read. */
    async readRun(runPath: string): Promise<Run> {
      const res = await request('GET', runPath);
      if (res.status !== 200) throw new DeployExit(2, `Could not read the run: ${errorMessage(res.body)}`);
      return res.body.data as Run;
    },

    /** One server of a run, with its steps' output; null when it cannot be read. */
    async readTarget(runPath: string, serverId: string): Promise<RunTargetDetail | null> {
      const res = await request('GET', `${runPath}/targets/${serverId}`);
      return res.status === 200 ? (res.body.data as RunTargetDetail) : null;
    },
  };
}

export type BosunApi = ReturnType<typeof bosunApi>;

/** The API of BOSUN_URL (with or without /api/v1), called with BOSUN_TOKEN; exit 2 when either is not set. */
export function bosunApiFromEnvironment(): BosunApi {
  const base = process.env.BOSUN_URL?.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  const token = process.env.BOSUN_TOKEN;
  if (!base || !token) throw new DeployExit(2, 'Set BOSUN_URL (e.g. http://bosun.internal:3000) and BOSUN_TOKEN');
  return bosunApi(base, token);
}
