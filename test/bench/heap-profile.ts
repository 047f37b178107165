import { Session } from 'node:inspector/promises';

/*
 * What holds this process's main-thread heap (the API, the activities, the MongoDB driver, SSH) while
 * a bench runs: V8's sampling heap profiler through the inspector, read every few seconds, the
 * fullest reading kept, its live bytes summed by the allocating code (the first frame of Bosun's or
 * of a package, below Node's internals).
 */

interface SampledNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampledNode[];
}

const place = (frame: SampledNode['callFrame']) => {
  const file = frame.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
};

/** Live bytes by the nearest frame on the stack that is not Node's own code. */
function bySite(root: SampledNode): Map<string, number> {
  const sizes = new Map<string, number>();
  const walk = (node: SampledNode, site: string) => {
    const url = node.callFrame.url;
    const own = url && !url.startsWith('node:') && !url.startsWith('internal/') ? place(node.callFrame) : site;
    if (node.selfSize) sizes.set(own, (sizes.get(own) ?? 0) + node.selfSize);
    node.children.forEach((child) => walk(child, own));
  };
  walk(root, '(native)');
  return sizes;
}

export async function sampleHeap(everyMs = 5000): Promise<{ stop: () => Promise<string> }> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 64 * 1024 });
  let fullest = { total: 0, sites: new Map<string, number>() };
  const read = async () => {
    const { profile } = (await session.post('HeapProfiler.getSamplingProfile')) as unknown as { profile: { head: SampledNode } };
    const sites = bySite(profile.head);
    const total = [...sites.values()].reduce((a, b) => a + b, 0);
    if (total > fullest.total) fullest = { total, sites };
  };
  const timer = setInterval(() => void read(), everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await read();
      await session.post('HeapProfiler.stopSampling');
      session.disconnect();
      const top = [...fullest.sites].sort((a, b) => b[1] - a[1]).slice(0, 30);
      return [`live main-thread heap at its fullest reading: ${(fullest.total / 2 ** 20).toFixed(0)} MiB`, ...top.map(([site, bytes]) => `  ${(bytes / 2 ** 20).toFixed(1).padStart(7)} MiB  ${site}`)].join('\n');
    },
  };
}
