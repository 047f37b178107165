import { setFlagsFromString } from 'node:v8';
import type { Config } from './config';
import { collectWhenQuiet, type QuietCollectionOptions } from './quiet-collection';

/**
 * How far V8 lets a heap grow past what its last full collection left live before it collects again
 * (HEAP_GROWTH_PERCENT). V8's own factor, on a machine whose heap limit is in gigabytes, goes up to 4×
 * the live size: a worker that had just run a fleet held 100–300 MiB of garbage on top of its 120 MiB
 * live, collected only when the heap reached that limit (docs/performance.md, "Memory during a large
 * run"). V8 reads `--heap-growing-percent` at each full collection, so setting it once the process
 * runs takes effect for the main thread's heap and the workflow threads' alike. 0: V8's own factor.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * The process's memory settings, applied once when it starts — by main() and by the benches' in-process
 * Bosun alike: the heaps' growth bound (HEAP_GROWTH_PERCENT) and their pages given back after a burst
 * of work (HEAP_RETURN_AFTER_BURSTS, src/quiet-collection.ts), `onCollected` told of each such collection.
 */
export function applyMemorySettings(memory: Config['memory'], onCollected?: QuietCollectionOptions['onCollected']): void {
  limitHeapGrowth(memory.heapGrowthPercent);
  if (memory.returnAfterBursts) collectWhenQuiet({ onCollected });
}
