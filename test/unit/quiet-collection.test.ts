import { execFileSync } from 'node:child_process';
import path from 'node:path';

/*
 * HEAP_RETURN_AFTER_BURSTS (src/quiet-collection.ts), as Bosun's main() starts it: a burst of work
 * grows the heap; once the process is quiet again the heap is collected and its pages given back —
 * and never while the work goes on. A process of its own (the readings are the whole process's CPU):
 * it works for `busyMs` (allocating, the way a worker's steps do: garbage that lives a little while),
 * then idles for `idleMs`, and prints each collection with when it came.
 */

const REPO = path.join(__dirname, '..', '..');
const CHILD = `
  const { collectWhenQuiet } = require('./src/quiet-collection');
  const [busyMs, idleMs] = process.argv.slice(1).map(Number);
  const started = Date.now();
  const collections = [];
  let workEnded = null;
  const stop = collectWhenQuiet({ everyMs: 250, busyCpuShare: 0.25, quietCpuShare: 0.1, grownBytes: 16 * 2 ** 20, onCollected: (c) => collections.push({ ...c, at: Date.now() - started }) });
  const recent = [];
  let peak = 0;
  const work = () => {
    if (Date.now() - started >= busyMs) {
      workEnded = Date.now() - started;
      recent.length = 0;
      return setTimeout(() => {
        stop();
        process.stdout.write(JSON.stringify({ workEnded, peak, collections }));
      }, idleMs);
    }
    for (let n = 0; n < 20; n += 1) {
      const garbage = [];
      for (let i = 0; i < 5000; i += 1) garbage.push({ text: 'y'.repeat(100) + i, list: [i] });
      recent.push(garbage);
      if (recent.length > 300) recent.shift();
    }
    peak = Math.max(peak, process.memoryUsage().heapTotal);
    setImmediate(work);
  };
  work();
`;

interface Outcome {
  workEnded: number;
  peak: number;
  collections: { beforeBytes: number; afterBytes: number; ms: number; at: number }[];
}

const run = (busyMs: number, idleMs: number): Outcome =>
  JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '-e', CHILD, String(busyMs), String(idleMs)], { cwd: REPO, encoding: 'utf8', timeout: 60_000 })) as Outcome;

test('once a burst of work is over, the heap it grew is collected and given back, once', () => {
  const { workEnded, peak, collections } = run(2_000, 3_000);
  expect(collections).toHaveLength(1);
  const [collected] = collections;
  // After the work, not during it; and the heap given back is most of what the burst grew.
  expect(collected!.at).toBeGreaterThanOrEqual(workEnded);
  expect(collected!.afterBytes).toBeLessThan(collected!.beforeBytes * 0.6);
  expect(collected!.afterBytes).toBeLessThan(peak * 0.6);
}, 90_000);

test('work that goes on is never interrupted by a collection of its own', () => {
  const { workEnded, collections } = run(5_000, 0);
  expect(workEnded).toBeGreaterThanOrEqual(5_000);
  expect(collections).toEqual([]);
}, 90_000);
