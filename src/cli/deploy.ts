import { randomUUID } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import type { ClientToServerEvents, DeploymentRunUpdatedEvent, ServerToClientEvents } from '../domain/events';

/** Exit codes for CI: 0 success, 1 failed/cancelled (or not done within --timeout), 2 usage or connection trouble. */
export class DeployExit extends Error {
  constructor(readonly code: 0 | 1 | 2, message: string) {
    super(message);
  }
}

interface StepView {
  name: string;
  status: string;
  output: string;
  exit_code: number | null;
  attempts?: number;
}

interface TargetView {
  server_id: string;
  title: string;
  host: string | null;
  batch: number;
  status: string;
  error: string | null;
  seq: number;
  started_at: string | null;
  completed_at: string | null;
  steps: Array<Omit<StepView, 'output'>>;
}

interface RunView {
  id: string;
  status: string;
  duration_seconds: number | null;
  /** A failed run's one line: which step failed, where and why. */
  error?: string | null;
  /** A fleet run's resolved strategy; null for a one-server run. */
  strategy?: { batch_size: number; max_failures: number; batches: number } | null;
  steps: StepView[];
  targets?: TargetView[];
  summary?: Record<string, number>;
}

const OBJECT_ID = /^[0-9a-f]{24}$/i;
/** How much of a failed step's output is repeated at the end, where a CI log is read first. */
const LAST_LINES = 20;

const FINAL = new Set(['success', 'failed', 'cancelled']);
const FINAL_TARGET = new Set([...FINAL, 'skipped']);
const say = (line: string) => process.stderr.write(`${line}\n`);

async function request(base: string, token: string, method: string, path: string, headers: Record<string, string> = {}, payload?: unknown) {
  let lastError: unknown;
  // Connection errors and 5xx are retried (with the same idempotency key, so never a second run).
  for (let attempt = 1; attempt <= 4; attempt += 1) {
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
    if (attempt < 4) await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
  }
  throw new DeployExit(2, `Cannot reach Bosun at ${base}: ${(lastError as Error).message}`);
}

/** The error's message, and what each of its details says (a parameter missing, say). */
const errorMessage = (body: Record<string, unknown>) => {
  const error = body.error as { message?: string; details?: Array<{ path?: string; message?: string }> } | undefined;
  if (!error?.message) return JSON.stringify(body);
  const details = (error.details ?? []).map((d) => `${d.path ? `${d.path}: ` : ''}${d.message ?? ''}`);
  return details.length ? `${error.message} (${details.join('; ')})` : error.message;
};

/**
 * Prints each step's output once, however it arrives: live chunks carry their offset in the step's
 * stream, snapshots and polls the whole (possibly capped) output.
 */
class OutputPrinter {
  private printed = new Map<string, number>();
  private announced = new Map<string, string>();
  /** A fleet run's output, line by line, each prefixed with its server: the part of a line still to come. */
  private partial = new Map<string, string>();

  /** `server`: a fleet run's target (its title), or '' for a one-server run. */
  step(server: string, index: number, name: string, status: string) {
    const key = `${server}/${index}`;
    if (this.announced.get(key) === status) return;
    this.announced.set(key, status);
    if (status !== 'pending') say(`${server ? `[${server}] ` : ''}==> ${name}: ${status}`);
  }

  /** A live chunk: prints what lies past what was printed; false if there is a hole before it. */
  chunk(server: string, index: number, offset: number, data: string): boolean {
    const done = this.printed.get(`${server}/${index}`) ?? 0;
    if (offset > done) return false;
    const fresh = data.slice(done - offset);
    if (fresh) this.write(server, index, fresh);
    return true;
  }

  /**
   * A whole run: prints the part of each step's output not yet shown. A fleet run's targets are
   * listed without output: each finished one is read once (`readTarget`) for what was missed live.
   */
  async catchUp(run: RunView, readTarget?: (serverId: string) => Promise<{ steps: StepView[] } | null>) {
    if (run.targets && run.strategy) {
      for (const target of run.targets) await this.target(target, readTarget);
      return;
    }
    this.steps('', run.steps);
  }

  /** A fleet run's target as a snapshot or an event shows it: its steps' statuses, and once it has finished, all its output. */
  async target(target: Pick<TargetView, 'server_id' | 'title' | 'status' | 'steps'>, readTarget?: (serverId: string) => Promise<{ steps: StepView[] } | null>) {
    if (FINAL_TARGET.has(target.status) && readTarget && !this.finishedTargets.has(target.server_id)) {
      this.finishedTargets.add(target.server_id);
      const detail = await readTarget(target.server_id);
      if (detail) {
        this.steps(target.title, detail.steps);
        return;
      }
    }
    target.steps.forEach((step, index) => this.step(target.title, index, step.name, step.status));
  }

  private readonly finishedTargets = new Set<string>();

  private steps(server: string, steps: StepView[]) {
    steps.forEach((step, index) => {
      const done = this.printed.get(`${server}/${index}`) ?? 0;
      if (step.output.length > done) this.write(server, index, step.output.slice(done));
      this.step(server, index, step.name, step.status);
    });
  }

  /** What is left of a fleet run's lines. */
  flush() {
    for (const [server, rest] of this.partial) if (rest) process.stdout.write(`[${server}] ${rest}\n`);
    this.partial.clear();
  }

  private write(server: string, index: number, data: string) {
    const key = `${server}/${index}`;
    this.printed.set(key, (this.printed.get(key) ?? 0) + data.length);
    if (!server) {
      process.stdout.write(data);
      return;
    }
    const lines = ((this.partial.get(server) ?? '') + data).split('\n');
    this.partial.set(server, lines.pop()!);
    for (const line of lines) process.stdout.write(`[${server}] ${line}\n`);
  }
}

/**
 * A deployment named by its name (unique in an organization) or its id. A token that may not list
 * deployments (no `read` scope) can still trigger one by id; a ref that is one deployment's id and
 * another's name is refused as ambiguous.
 */
async function resolveDeployment(base: string, token: string, ref: string): Promise<string> {
  const byName: string[] = [];
  let byId = false;
  for (let page = 1; ; page += 1) {
    const res = await request(base, token, 'GET', `/deployments?per_page=100&page=${page}`);
    if (res.status === 403 && OBJECT_ID.test(ref)) return ref;
    if (res.status === 403) throw new DeployExit(2, `Naming a deployment by its name takes a token with the read scope (it lists the deployments); give its id instead`);
    if (res.status !== 200) throw new DeployExit(2, `Could not list deployments: ${errorMessage(res.body)}`);
    for (const d of res.body.data as Array<{ id: string; name: string }>) {
      if (d.name === ref) byName.push(d.id);
      if (d.id === ref) byId = true;
    }
    const meta = res.body.meta as { last_page?: number } | undefined;
    if (!meta?.last_page || page >= meta.last_page) break;
  }
  if (byName.length === 1 && byId) throw new DeployExit(2, `"${ref}" is one deployment's id and another's name (${byName[0]}): give the id of the one you mean`);
  if (byName.length === 1) return byName[0]!;
  if (byId || OBJECT_ID.test(ref)) return ref;
  throw new DeployExit(2, `No deployment named "${ref}" (nor with that id) in this token's organization`);
}

/** After a failed run: its error, and each failed step's exit code and last lines, where a CI log is read first. */
function reportFailure(run: RunView) {
  const failed = run.steps.filter((s) => s.status === 'failed');
  // Without a failed step (the run failed between steps) the last step that ran says the most.
  const telling = failed.length ? failed : run.steps.filter((s) => s.status !== 'pending' && s.status !== 'skipped').slice(-1);
  for (const step of telling) {
    const tries = step.attempts && step.attempts > 1 ? ` after ${step.attempts} attempts` : '';
    say(`==> ${step.name}: ${step.status}${step.exit_code === null ? '' : ` with exit code ${step.exit_code}`}${tries}; ${step.output ? 'its last lines:' : 'no output'}`);
    if (!step.output) continue;
    const lines = step.output.replace(/\n$/, '').split('\n');
    for (const line of lines.slice(-LAST_LINES)) say(`    ${line}`);
  }
  say(`Error: ${run.error ?? (telling.length ? `step "${telling[0]!.name}" ${telling[0]!.status}` : 'the run failed before any step ran')}`);
}

/** A fleet run's end: one line per server, then each failed target's error and last lines (the first few). */
async function reportFleet(run: RunView, readTarget: (serverId: string) => Promise<{ steps: StepView[] } | null>) {
  const targets = run.targets ?? [];
  const width = Math.max(6, ...targets.map((t) => t.title.length));
  say('');
  say(`${'SERVER'.padEnd(width)}  BATCH  STATUS     STEPS OK  ERROR`);
  for (const t of targets) {
    const ok = t.steps.filter((s) => s.status === 'success').length;
    say(`${t.title.padEnd(width)}  ${String(t.batch).padEnd(5)}  ${t.status.padEnd(9)}  ${`${ok}/${t.steps.length}`.padEnd(8)}  ${t.error ?? ''}`);
  }
  const s = run.summary ?? {};
  say(`${s.total ?? targets.length} targets: ${['success', 'failed', 'skipped', 'cancelled', 'running', 'queued'].filter((k) => s[k]).map((k) => `${s[k]} ${k}`).join(', ')}`);
  const failed = targets.filter((t) => t.status === 'failed').slice(0, 5);
  for (const t of failed) {
    const detail = await readTarget(t.server_id);
    const step = detail?.steps.find((x) => x.status === 'failed');
    if (!step) continue;
    say(`==> [${t.title}] ${step.name}: failed${step.exit_code === null ? '' : ` with exit code ${step.exit_code}`}; ${step.output ? 'its last lines:' : 'no output'}`);
    for (const line of step.output.replace(/\n$/, '').split('\n').slice(-LAST_LINES)) if (step.output) say(`    ${line}`);
  }
  if (run.error) say(`Error: ${run.error}`);
}

/** `--param name=value` options as a trigger's parameters. */
export function parseParams(pairs: string[]): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw new DeployExit(2, `--param takes name=value (got "${pair}")`);
    parameters[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return parameters;
}

export async function deploy(deployment: string, options: { wait?: boolean; timeout?: number; idempotencyKey?: string; params?: string[] }): Promise<never> {
  const base = process.env.BOSUN_URL?.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  const token = process.env.BOSUN_TOKEN;
  if (!base || !token) throw new DeployExit(2, 'Set BOSUN_URL (e.g. http://bosun.internal:3000) and BOSUN_TOKEN');
  const deploymentId = await resolveDeployment(base, token, deployment);
  const key = options.idempotencyKey ?? `bosun-cli-${randomUUID()}`;
  if (!options.idempotencyKey) say(`Idempotency-Key: ${key} (rerun with --idempotency-key ${key} to retry without a second run)`);

  const parameters = parseParams(options.params ?? []);
  const trigger = await request(base, token, 'POST', `/deployments/${encodeURIComponent(deploymentId)}/run`, { 'Idempotency-Key': key }, { parameters });
  if (trigger.status !== 202) throw new DeployExit(2, `Could not trigger: ${errorMessage(trigger.body)}`);
  const runId = trigger.body.run_id as string;
  process.stdout.write(options.wait ? '' : `${runId}\n`);
  say(`Run ${runId}: ${trigger.body.status}`);
  if (!options.wait) throw new DeployExit(0, '');

  const runPath = `/deployments/${encodeURIComponent(deploymentId)}/runs/${runId}`;
  const read = async () => {
    const res = await request(base, token, 'GET', runPath);
    if (res.status !== 200) throw new DeployExit(2, `Could not read the run: ${errorMessage(res.body)}`);
    return res.body.data as RunView;
  };
  const readTarget = async (serverId: string) => {
    const res = await request(base, token, 'GET', `${runPath}/targets/${serverId}`);
    return res.status === 200 ? (res.body.data as { steps: StepView[] }) : null;
  };
  const printer = new OutputPrinter();
  const deadline = options.timeout ? Date.now() + options.timeout * 1000 : Infinity;

  const final = await new Promise<RunView>((resolve, reject) => {
    let socket: Socket<ServerToClientEvents, ClientToServerEvents> | undefined;
    let live = false;
    let lastSeq = -1;
    const targetSeqs = new Map<string, number>();
    let settled = false;
    const finish = (result: RunView | DeployExit) => {
      if (settled) return;
      settled = true;
      socket?.close();
      clearInterval(poller);
      if (result instanceof DeployExit) reject(result);
      else resolve(result);
    };
    const resync = () =>
      read()
        .then(async (run) => {
          await printer.catchUp(run, readTarget);
          if (FINAL.has(run.status)) finish(run);
        })
        .catch((error: unknown) => finish(error instanceof DeployExit ? error : new DeployExit(2, String(error))));
    // Polling stands in while the socket is down (it cannot connect, or reconnects); it also enforces --timeout.
    const poller = setInterval(() => {
      if (Date.now() > deadline) return finish(new DeployExit(1, `Run ${runId} not finished after ${options.timeout} s (it goes on; poll ${runPath})`));
      if (!live) void resync();
    }, 2000);

    socket = io(base, { auth: { token }, transports: ['websocket'], reconnectionAttempts: 5 });
    socket.on('connect', () => {
      void socket!
        .emitWithAck('subscribe', { run_id: runId })
        .then((answer) => {
          if (!answer.ok) return finish(new DeployExit(2, answer.error.message));
          const run = answer.data.run as RunView;
          lastSeq = answer.data.seq;
          for (const t of run.targets ?? []) targetSeqs.set(t.server_id, t.seq);
          live = true;
          void printer.catchUp(run, readTarget).then(() => FINAL.has(run.status) && finish(run));
        })
        .catch(() => undefined);
    });
    socket.on('disconnect', () => {
      live = false;
    });
    socket.on('DeploymentRunUpdated', (event: DeploymentRunUpdatedEvent) => {
      if (!live) return;
      if (event.target) {
        // A fleet run's target: its own sequence, its own output.
        const { target } = event;
        const last = targetSeqs.get(target.server_id) ?? 0;
        if (target.seq <= last) return;
        targetSeqs.set(target.server_id, target.seq);
        if (event.output) printer.chunk(target.title, event.output.step, event.output.offset, event.output.data);
        void printer.target(target, readTarget);
        if (target.seq !== last + 1) void resync();
        return;
      }
      if (event.seq === null || event.seq <= lastSeq) return;
      const gap = event.seq !== lastSeq + 1;
      lastSeq = event.seq;
      // A missed event, or a chunk past what was printed: the run itself has it all.
      if (gap || (event.output && !printer.chunk('', event.output.step, event.output.offset, event.output.data))) {
        void resync();
        return;
      }
      event.steps.forEach((s, i) => printer.step('', i, s.name, s.status));
      if (event.status && FINAL.has(event.status)) void resync();
    });
    socket.on('connect_error', (error) => say(`(live updates unavailable: ${error.message}; polling)`));
  });

  printer.flush();
  if (final.strategy) {
    await printer.catchUp(final, readTarget);
    printer.flush();
    await reportFleet(final, readTarget);
  } else if (final.status === 'failed') reportFailure(final);
  say(`Run ${runId}: ${final.status}${final.duration_seconds === null ? '' : ` in ${final.duration_seconds} s`}`);
  throw new DeployExit(final.status === 'success' ? 0 : 1, '');
}
