import http from 'node:http';
import { MongoClient } from 'mongodb';
import { entryHash, GENESIS_HASH } from '../../src/domain/audit/chain';

/** The id of an organization, by slug. */
export async function organizationIdOf(mongoUri: string, slug: string): Promise<string> {
  const client = await MongoClient.connect(mongoUri);
  try {
    const org = await client.db().collection('organizations').findOne({ slug });
    if (!org) throw new Error(`no organization ${slug}`);
    return org._id.toString();
  } finally {
    await client.close();
  }
}

/**
 * `count` chained entries of an organization written straight into the trail (a command each, of the
 * size real ones have), in batches: a long history without running a million commands.
 */
export async function insertChainedEntries(mongoUri: string, organizationId: string, count: number): Promise<void> {
  const client = await MongoClient.connect(mongoUri);
  try {
    const trail = client.db().collection('audit');
    let prev = GENESIS_HASH;
    const start = Date.now() - count;
    for (let from = 1; from <= count; from += 10_000) {
      const batch = [];
      for (let seq = from; seq < Math.min(from + 10_000, count + 1); seq += 1) {
        const command = `deploy --release ${seq} && systemctl restart app`;
        const entry = {
          organization_id: organizationId,
          seq,
          at: new Date(start + seq),
          actor: { type: 'system' as const, id: null, name: 'bosun worker' },
          source_address: null,
          action: 'command.run',
          target: { kind: 'server', id: '65f000000000000000000001' },
          server_id: '65f000000000000000000001',
          outcome: 'ok',
          details: { run_id: '65f000000000000000000002', step: seq % 10, step_name: 'deploy', exit_attempt: 0, command, command_sha256: 'a'.repeat(64), exit_code: 0 },
          prev_hash: prev,
        };
        const hash = entryHash(entry);
        prev = hash;
        batch.push({ ...entry, hash, _id: `bulk:${organizationId}:${seq}` as never });
      }
      await trail.insertMany(batch, { ordered: false, writeConcern: { w: 1 } });
    }
  } finally {
    await client.close();
  }
}

/**
 * GET /api/v1/audit/export read as a stream and thrown away line by line, while this process's RSS
 * and heap are sampled: how many lines and bytes came, and the most memory used meanwhile.
 */
export function streamExport(baseUrl: string, token: string): Promise<{ lines: number; bytes: number; ms: number; rssBefore: number; peakRss: number; heapBefore: number; peakHeap: number }> {
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;
  let peakRss = rssBefore;
  let peakHeap = heapBefore;
  const sample = setInterval(() => {
    const { rss, heapUsed } = process.memoryUsage();
    peakRss = Math.max(peakRss, rss);
    peakHeap = Math.max(peakHeap, heapUsed);
  }, 100);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${baseUrl}/api/v1/audit/export`, { headers: { Authorization: `Bearer ${token}` } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
        let lines = 0;
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
        });
        res.on('end', () => {
          clearInterval(sample);
          resolve({ lines, bytes, ms: performance.now() - t0, rssBefore, peakRss, heapBefore, peakHeap });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
