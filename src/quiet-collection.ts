import { Session } from 'node:inspector';
import { getHeapStatistics } from 'node:v8';

const MiB = 2 ** 20;

/**
 * V8's collection for low memory (the inspector's `HeapProfiler.collectGarbage`, in this process, no
 * debugger attached): full collections that compact the heap and give its emptied pages back, as V8's
 * own memory reducer does when it finds a process idle. Resolves once done.
 */
function collectForLowMemory(): Promise<void> {
  const session = new Session();
  session.connect();
  return new Promise<void>((resolve, reject) => session.post('HeapProfiler.collectGarbage', (error) => (error ? reject(error) : resolve()))).finally(() => session.disconnect());
}

export interface QuietCollectionOptions {
  /** How often the process's CPU and heap are read. */
  everyMs?: number;
  /** A burst: the whole process used at least this share of one core over a reading's interval. */
  busyCpuShare?: number;
  /** Quiet again: less than this share. */
  quietCpuShare?: number;
  /** How far the main thread's heap must have grown past its size after the last collection. */
  grownBytes?: number;
  /** Told of each collection: the heap's size before and after, and how long it took. */
  onCollected?: (collected: { beforeBytes: number; afterBytes: number; ms: number }) => void;
}

/**
 * Gives a burst's memory back once it is over. V8 grows a heap during a burst of work (a large fleet
 * run) and hands the pages back only when its own memory reducer finds the process idle — which a
 * server with timers, change streams and health checks seldom is, so after a 1,000-target run the
 * process kept 40–100 MiB above its idle size for minutes at a time (docs/performance.md, "Memory
 * after a burst, given back"). Here, every `everyMs`: once the process has been busy (at least
 * `busyCpuShare` of a core over an interval) and is quiet again (under `quietCpuShare`), with the
 * main thread's heap grown `grownBytes` past its size after the last collection, one collection for
 * low memory: a pause of 0.15–0.3 s (a 100–150 MiB live heap) once per burst, never during one, and
 * never under a steady load (no burst ends). Returns the stop.
 */
export function collectWhenQuiet({ everyMs = 5_000, busyCpuShare = 0.6, quietCpuShare = 0.25, grownBytes = 32 * MiB, onCollected }: QuietCollectionOptions = {}): () => void {
  let settled = getHeapStatistics().total_heap_size;
  let busy = false;
  let cpu = process.cpuUsage();
  let at = process.hrtime.bigint();
  const restartClock = () => {
    cpu = process.cpuUsage();
    at = process.hrtime.bigint();
  };
  let collecting = false;
  const timer = setInterval(() => {
    if (collecting) return;
    const used = process.cpuUsage(cpu);
    const share = (used.user + used.system) / (Number(process.hrtime.bigint() - at) / 1000);
    restartClock();
    const size = getHeapStatistics().total_heap_size;
    settled = Math.min(settled, size);
    if (share >= busyCpuShare) busy = true;
    if (!busy || share >= quietCpuShare) return;
    busy = false;
    if (size - settled < grownBytes) return;
    const started = Date.now();
    collecting = true;
    void collectForLowMemory()
      .then(() => {
        settled = getHeapStatistics().total_heap_size;
        onCollected?.({ beforeBytes: size, afterBytes: settled, ms: Date.now() - started });
      }, () => undefined)
      .finally(() => {
        collecting = false;
        // The collection's own CPU is not the process's work.
        restartClock();
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
