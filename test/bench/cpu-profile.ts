import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/*
 * A CPU profile of this process's main thread (the API, the activities, the MongoDB driver, SSH;
 * the workflows run on threads of their own, counted by process-stats' threadCpu) around what a
 * bench measures, through the inspector, summarized by where the code comes from.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const NODE_INTERNALS = 'Node internals (net, streams, timers, crypto)';

/** Where a frame's code comes from, coarsely: what the summary adds up. */
const AREAS: Array<[string, RegExp]> = [
  ['Temporal SDK (worker, activities, client)', /node_modules\/@temporalio\//],
  ['MongoDB driver, BSON, mongoose', /node_modules\/(mongodb|bson|mongoose|mquery)\//],
  ['SSH (ssh2, node-ssh)', /node_modules\/(ssh2|node-ssh|cpu-features)\//],
  ['HTTP API (express, supertest, socket.io, zod)', /node_modules\/(express|router|body-parser|supertest|superagent|socket\.io[^/]*|engine\.io[^/]*|zod|ws)\//],
  ['Bosun: activities/', /\/activities\//],
  ['Bosun: src/domain/ssh', /\/src\/domain\/ssh\//],
  ['Bosun: src/ (API, stores, worker)', /\/src\//],
  ['logging (pino)', /node_modules\/pino/],
  ['other packages', /node_modules\//],
  [NODE_INTERNALS, /^node:|^internal\//],
];

/** The area of the first frame up the stack that belongs to a package or to Bosun: native code and Node's internals count for their caller. */
function areaOf(node: ProfileNode, parentOf: Map<number, ProfileNode>): string {
  const { functionName } = node.callFrame;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(idle)' || functionName === '(program)') return functionName.slice(1, -1);
  for (let frame: ProfileNode | undefined = node; frame; frame = parentOf.get(frame.id)) {
    const area = AREAS.find(([, re]) => re.test(frame!.callFrame.url))?.[0];
    if (area && area !== NODE_INTERNALS) return area;
    if (frame.callFrame.url && !area) return 'bench and test support';
  }
  return node.callFrame.url ? NODE_INTERNALS : `native (${functionName})`;
}

export interface ProfileSummary {
  /** Milliseconds of the main thread by area (native code and Node's internals counted for their caller), busiest first; idle left out. */
  areas: Array<[string, number]>;
  /** The busiest functions by self time. */
  functions: Array<[string, number]>;
  busyMs: number;
}

export function summarize(profile: Profile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n);
  const self = new Map<number, number>();
  // The first delta runs from the profiler's start to its first sample: not the program's.
  profile.samples.forEach((id, i) => i > 0 && self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    const area = areaOf(node, parentOf);
    if (area === 'idle') continue;
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|activities|workflows|test)\//, '$1/');
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where ? `${where}:${node.callFrame.lineNumber + 1}` : `[native, in ${area}]`}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { areas: sorted(areas), functions: sorted(functions).slice(0, 15), busyMs: [...areas.values()].reduce((a, b) => a + b, 0) };
}

/** Starts profiling the main thread; stop() writes the profile to `file` and returns its summary. */
export async function profileMainThread(file: string): Promise<{ stop: () => Promise<ProfileSummary> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 1 ms between samples: a step's work is a few ms.
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      return summarize(profile);
    },
  };
}
