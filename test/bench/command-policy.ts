/**
 * npm run bench:command-policy — what the command policy costs per line: loading the parser (the
 * first call in a process), then every corpus line (test/policy/corpus) classified five times, each
 * time made new with a trailing comment so that no parse is reused (median and p99), and once more
 * as the last round again (parses reused, the rules run).
 */
import { performance } from 'node:perf_hooks';

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;

const t0 = performance.now();
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { assessCommand } = require('../../src/domain/planner/policy') as typeof import('../../src/domain/planner/policy');
assessCommand('true');
const loadMs = performance.now() - t0;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { benignCorpus, bypassCorpus } = require('../support/policy-corpus') as typeof import('../support/policy-corpus');
const lines = [...bypassCorpus, ...benignCorpus].map((c) => c.command);
const ROUNDS = 5;
const fresh: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  for (const line of lines) {
    const start = performance.now();
    assessCommand(`${line}\n# ${round}`);
    if (round > 0) fresh.push(performance.now() - start);
  }
}
const again = performance.now();
for (const line of lines) assessCommand(`${line}\n# ${ROUNDS - 1}`);
const againUs = ((performance.now() - again) / lines.length) * 1000;
console.log(
  JSON.stringify({
    load_ms: +loadMs.toFixed(1),
    lines: lines.length,
    median_us: +(quantile(fresh, 0.5) * 1000).toFixed(0),
    p99_us: +(quantile(fresh, 0.99) * 1000).toFixed(0),
    reused_parse_mean_us: +againUs.toFixed(0),
    rss_mb: +(process.memoryUsage().rss / 2 ** 20).toFixed(0),
  }),
);
