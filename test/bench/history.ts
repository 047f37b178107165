import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/*
 * The guard against slow drift: a bench prints, beside today's figures, those of the last run
 * recorded in the repository (test/bench/history/<bench>.json) for the same configuration, and flags
 * a figure worse than recorded by more than the bench's noise band — a flag, not a failure: the
 * machine is shared. `BENCH_RECORD=1` (or `--record`) appends today's run; `BENCH_NOTE` says what
 * else loaded the machine.
 */

const HISTORY_DIR = path.join(__dirname, 'history');

export interface Figure {
  /** Stable key in the history file, e.g. "bosun_over_floor_batch20". */
  key: string;
  label: string;
  value: number;
  unit: 'ms' | 's' | '×' | 'MiB' | 'ops' | 'events' | '';
  /** Which way is better; figures without one are shown, never flagged (wall times move with the machine's load, ratios much less). */
  better?: 'lower' | 'higher';
}

export interface Recorded {
  date: string;
  commit: string;
  /** Cores, load average when the bench began, and BENCH_NOTE. */
  machine: string;
  /** What was run, e.g. "100 targets, batch 20 and 100": only runs of the same configuration compare. */
  configuration: string;
  figures: Record<string, number>;
}

const fileOf = (bench: string) => path.join(HISTORY_DIR, `${bench}.json`);

export function recordedRuns(bench: string): Recorded[] {
  return existsSync(fileOf(bench)) ? (JSON.parse(readFileSync(fileOf(bench), 'utf8')) as Recorded[]) : [];
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: __dirname, encoding: 'utf8' }).trim();
    // Changes to the docs and to these records are not changes to the code measured.
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', ':/', ':!/docs', ':!/test/bench/history'], { cwd: __dirname, encoding: 'utf8' }).trim();
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

/** Load when the bench began: taken at import, before the bench's own work loads the machine. */
const loadAtStart = os.loadavg()[0]!;

const machine = () => [`${os.cpus().length} cores`, `load ${loadAtStart.toFixed(1)} at start`, process.env.BENCH_NOTE].filter(Boolean).join(', ');

export const recordAsked = () => process.env.BENCH_RECORD === '1' || process.argv.includes('--record');

const shown = (value: number, unit: Figure['unit']) => {
  const digits = unit === '×' || (unit === 'ms' && value < 100) || (unit === 's' && value < 100) ? 1 : 0;
  return `${value.toFixed(unit === '×' && value < 10 ? 2 : digits)}${unit === '×' ? '×' : unit ? ` ${unit}` : ''}`;
};

/**
 * Prints today's figures beside the last recorded run of this configuration, flagging each figure
 * that is worse by more than noiseBand (0.2: 20%), and appends today's when asked (with outcome,
 * e.g. that a step ran twice, beside the machine's note). Returns the flagged figures' labels.
 */
export function compareWithRecorded(bench: string, configuration: string, figures: Figure[], noiseBand: number, outcome?: string): string[] {
  const last = recordedRuns(bench)
    .filter((r) => r.configuration === configuration)
    .at(-1);
  const flagged: string[] = [];
  console.log('');
  console.log(last ? `against the last recorded run (${last.date}, ${last.commit}; ${last.machine}), noise band ±${Math.round(noiseBand * 100)}%:` : `no recorded run of "${configuration}" in test/bench/history/${bench}.json yet`);
  for (const f of figures) {
    const before = last?.figures[f.key];
    let note = '';
    if (before !== undefined && before > 0) {
      const change = f.value / before - 1;
      const worse = f.better === 'lower' ? change > noiseBand : f.better === 'higher' ? -change > noiseBand : false;
      if (worse) flagged.push(f.label);
      note = `   recorded ${shown(before, f.unit)} (${change >= 0 ? '+' : ''}${(change * 100).toFixed(0)}%)${worse ? '   ⚠ WORSE THAN RECORDED beyond the noise band' : ''}`;
    }
    console.log(`  ${f.label.padEnd(48)} ${shown(f.value, f.unit).padStart(10)}${note}`);
  }
  if (flagged.length) console.log(`⚠ slow drift? ${flagged.length} figure(s) worse than the last recorded run beyond the noise band: ${flagged.join('; ')} (run again on a quiet machine before believing it)`);
  if (recordAsked()) {
    const entry: Recorded = { date: new Date().toISOString(), commit: commit(), machine: [machine(), outcome].filter(Boolean).join('; '), configuration, figures: Object.fromEntries(figures.map((f) => [f.key, Number(f.value.toFixed(3))])) };
    mkdirSync(HISTORY_DIR, { recursive: true });
    writeFileSync(fileOf(bench), `${JSON.stringify([...recordedRuns(bench), entry], null, 2)}\n`);
    console.log(`recorded in test/bench/history/${bench}.json`);
  }
  return flagged;
}
