/**
 * npm run bench:audit-export — GET /api/v1/audit/export of 1,000,000 entries (BENCH_AUDIT_ENTRIES),
 * written straight into the trail, streamed by a client that keeps nothing; this process (Bosun and
 * the client) has its RSS and heap sampled every 100 ms. Constant memory: the peak stays near where
 * it began, whatever the count.
 */
import { runBench } from './harness';
import { insertChainedEntries, organizationIdOf, streamExport } from '../support/audit-bulk';

const COUNT = Number(process.env.BENCH_AUDIT_ENTRIES ?? 1_000_000);
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

runBench({}, async (bosun) => {
  const token = await bosun.token('export-bench');
  const organizationId = await organizationIdOf(bosun.mongoUri, 'export-bench');
  const t0 = performance.now();
  await insertChainedEntries(bosun.mongoUri, organizationId, COUNT);
  console.log(`inserted ${COUNT.toLocaleString('en')} chained entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const result = await streamExport(bosun.url, token);
  if (result.lines !== COUNT) throw new Error(`exported ${result.lines} lines, expected ${COUNT}`);
  console.log(`exported ${result.lines.toLocaleString('en')} lines, ${mb(result.bytes)}, in ${(result.ms / 1000).toFixed(1)} s (${Math.round(result.lines / (result.ms / 1000)).toLocaleString('en')} entries/s)`);
  console.log(`RSS    ${mb(result.rssBefore)} before, peak ${mb(result.peakRss)} (+${mb(result.peakRss - result.rssBefore)})`);
  console.log(`heap   ${mb(result.heapBefore)} before, peak ${mb(result.peakHeap)} (+${mb(result.peakHeap - result.heapBefore)})`);
});
