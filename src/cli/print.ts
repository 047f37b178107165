import type { RunTargetState } from '../domain/events';
import type { Run, RunTargetDetail } from './api-types';

/** How much of a failed step's output is repeated at the end, where a CI log is read first. */
const LAST_LINES = 20;
const FINAL_TARGET = new Set(['success', 'failed', 'cancelled', 'skipped']);

/** Progress and reports go to stderr: stdout carries the steps' output alone (or the run's id). */
export const say = (line: string) => process.stderr.write(`${line}\n`);

/** A step with its output: a one-server run's, or a target's as read on its own. */
type StepWithOutput = Pick<Run['steps'][number], 'name' | 'status' | 'output' | 'exit_code'>;
/** Reads one target of the run with its steps' output (null when it cannot be read). */
export type ReadTarget = (serverId: string) => Promise<Pick<RunTargetDetail, 'steps'> | null>;

/**
 * Prints each step's output once, however it arrives: live chunks carry their offset in the step's
 * stream, snapshots and polls the whole (possibly capped) output.
 */
export class OutputPrinter {
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
  async catchUp(run: Run, readTarget?: ReadTarget) {
    if (run.strategy) {
      for (const target of run.targets) await this.target(target, readTarget);
      return;
    }
    this.steps('', run.steps);
  }

  /** A fleet run's target as a snapshot or an event shows it: its steps' statuses, and once it has finished, all its output. */
  async target(target: Pick<RunTargetState, 'server_id' | 'title' | 'status' | 'steps'>, readTarget?: ReadTarget) {
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
  private guarded = '';

  /** What a fleet run waits for between batches (people's approvals, a resume), printed when it changes. */
  guards(run: Pick<Run, 'status' | 'gate' | 'pause' | 'rollback'> | null) {
    const line = run ? guardLine(run) : '';
    if (line === this.guarded) return;
    this.guarded = line;
    if (line) say(line);
  }

  private steps(server: string, steps: StepWithOutput[]) {
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

/** "waiting for 2 approvals before batch 2 (1 given: alice); expires at …", "paused by carol: why", "frozen by black-friday until …", or '' when it waits for nobody. */
export function guardLine({ status, gate, pause, rollback, freeze }: Pick<Run, 'status' | 'gate' | 'pause'> & Partial<Pick<Run, 'rollback' | 'freeze'>>): string {
  if (status === 'awaiting_approval' && gate) {
    const names = gate.approvals.map((a) => a.by.name);
    const plural = gate.approvals_required > 1 ? 's' : '';
    return `waiting for ${gate.approvals_required} approval${plural} before ${gate.before_target ? `target ${gate.before_target}` : `batch ${gate.before_batch}`} (${names.length} given${names.length ? `: ${names.join(', ')}` : ''}); expires at ${gate.expires_at}`;
  }
  if (status === 'paused' && pause) return `paused by ${pause.by.name}: ${pause.reason} (waiting for a resume)`;
  if (status === 'frozen' && freeze) return `frozen by ${freeze.names.join(', ')} until ${freeze.until} (goes on when the freeze lifts)`;
  if (rollback?.status === 'running') return `halted: rolling back on ${rollback.touched} touched server${rollback.touched > 1 ? 's' : ''}, newest batch first`;
  if (status === 'running' && pause) return `pausing after this batch (asked by ${pause.by.name}: ${pause.reason})`;
  return '';
}

/** After a failed run: its error, and each failed step's exit code and last lines, where a CI log is read first. */
export function reportFailure(run: Run) {
  const failed = run.steps.filter((s) => s.status === 'failed');
  // Without a failed step (the run failed between steps) the last step that ran says the most.
  const telling = failed.length ? failed : run.steps.filter((s) => s.status !== 'pending' && s.status !== 'skipped').slice(-1);
  for (const step of telling) {
    const tries = step.attempts > 1 ? ` after ${step.attempts} attempts` : '';
    say(`==> ${step.name}: ${step.status}${step.exit_code === null ? '' : ` with exit code ${step.exit_code}`}${tries}; ${step.output ? 'its last lines:' : 'no output'}`);
    if (!step.output) continue;
    const lines = step.output.replace(/\n$/, '').split('\n');
    for (const line of lines.slice(-LAST_LINES)) say(`    ${line}`);
  }
  say(`Error: ${run.error ?? (telling.length ? `step "${telling[0]!.name}" ${telling[0]!.status}` : 'the run failed before any step ran')}`);
}

/** A fleet run's end: one line per server, then each failed target's error and last lines (the first few). */
export async function reportFleet(run: Run, readTarget: ReadTarget) {
  const { targets } = run;
  const width = Math.max(6, ...targets.map((t) => t.title.length));
  say('');
  say(`${'SERVER'.padEnd(width)}  BATCH  STATUS     STEPS OK  ERROR`);
  for (const t of targets) {
    const ok = t.steps.filter((s) => s.status === 'success').length;
    say(`${t.title.padEnd(width)}  ${String(t.batch).padEnd(5)}  ${t.status.padEnd(9)}  ${`${ok}/${t.steps.length}`.padEnd(8)}  ${t.error ?? ''}`);
  }
  const s = run.summary;
  say(`${s.total} targets: ${(['success', 'failed', 'skipped', 'cancelled', 'running', 'queued'] as const).filter((k) => s[k]).map((k) => `${s[k]} ${k}`).join(', ')}`);
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
