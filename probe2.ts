import { Client, Connection } from '@temporalio/client';
async function main() {
  const connection = await Connection.connect({ address: '127.0.0.1:17233' });
  const client = new Client({ connection });
  const id = 'probe2-' + Date.now();
  const h = await client.schedule.create({ scheduleId: id, spec: { intervals: [{ every: '5s' }], jitter: '3s' }, action: { type: 'startWorkflow', workflowType: 'x', taskQueue: 'q', args: [{ a: 1 }], workflowId: 'tick-' + id }, policies: { overlap: 'ALLOW_ALL' as any } });
  await new Promise((r) => setTimeout(r, 12000));
  const d = await h.describe();
  console.log(JSON.stringify(d.info.recentActions, null, 1));
  for await (const w of client.workflow.list({ query: `TemporalScheduledById = '${id}'` })) {
    console.log(w.workflowId, w.startTime.toISOString(), JSON.stringify(w.searchAttributes), JSON.stringify(w.typedSearchAttributes));
  }
  // update semantics
  await h.update((prev) => ({ ...prev, spec: { intervals: [{ every: '1h' }] }, memo: { revision: 3 } } as any));
  const d2 = await h.describe(); console.log('memo', d2.memo, d2.info.nextActionTimes.length, d2.state);
  await h.delete();
}
main().catch((e) => { console.error(e); process.exit(1); });
