import { execFileSync } from 'node:child_process';
import path from 'node:path';

/*
 * HEAP_GROWTH_PERCENT (src/heap-growth.ts): V8's flag set while the process already runs, as Bosun's
 * main() sets it, bounds how far the heap grows past what is live. A process of its own per setting
 * (the flag is process-wide): it keeps about 60 MiB live and makes garbage that lives long enough to
 * reach the old generation, the way a worker's steps do; the heap's peak size is read at each round.
 */

const REPO = path.join(__dirname, '..', '..');
const CHILD = `
  const { limitHeapGrowth } = require('./src/heap-growth');
  limitHeapGrowth(Number(process.argv[1]));
  const live = [];
  for (let i = 0; i < 150000; i += 1) live.push({ text: 'x'.repeat(300) + i });
  const recent = [];
  let peak = 0;
  for (let round = 0; round < 200; round += 1) {
    const garbage = [];
    for (let i = 0; i < 10000; i += 1) garbage.push({ text: 'y'.repeat(100) + i, list: [i] });
    recent.push(garbage);
    if (recent.length > 4) recent.shift();
    peak = Math.max(peak, process.memoryUsage().heapTotal);
  }
  process.stdout.write(String(peak));
`;

const peakHeap = (percent: number) =>
  Number(execFileSync(process.execPath, ['--import', 'tsx', '-e', CHILD, String(percent)], { cwd: REPO, encoding: 'utf8', timeout: 60_000 }));

test('a heap growth bound set at run time keeps the heap well below the size V8 lets it reach on its own', () => {
  const own = peakHeap(0);
  const bounded = peakHeap(20);
  // Measured on this machine: 433–436 MiB on its own, 174–183 MiB bounded.
  expect(bounded).toBeLessThan(own * 0.85);
}, 120_000);
