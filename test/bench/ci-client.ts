/**
 * A CI job's side of the bench, in a process of its own. Triggers, each timed from the request's
 * start to the end of its answer: COUNT of them at once (MODE=concurrent) or one after the other
 * (MODE=sequential); CONNECTIONS=new opens a connection per trigger, CONNECTIONS=open sends each on
 * a keep-alive connection opened beforehand (as HTTP benchmarks such as wrk measure: the time is the
 * request's, not the TCP handshake's). Prints [{ ms, status, runId }] as JSON. Or MODE=run: COUNT
 * runs one after the other, each triggered and then polled every POLL_MS until it ends, timed from
 * the trigger to the poll that saw it end; prints [{ ms, status, runId, reruns }] (reruns: steps
 * started more than once). Input from the environment: BOSUN_URL, BOSUN_TOKEN, DEPLOYMENT_ID, COUNT,
 * MODE, CONNECTIONS, POLL_MS.
 */
import http from 'node:http';

const base = process.env.BOSUN_URL!;
const url = new URL(`/api/v1/deployments/${process.env.DEPLOYMENT_ID}/run`, base);
const count = Number(process.env.COUNT ?? 50);
const agent = process.env.CONNECTIONS === 'open' ? new http.Agent({ keepAlive: true, maxSockets: count }) : false;

function send(target: URL, method: string): Promise<{ ms: number; status: number; runId: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(target, { method, agent, headers: { authorization: `Bearer ${process.env.BOSUN_TOKEN}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = performance.now() - t0;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { run_id?: string };
        resolve({ ms, status: res.statusCode ?? 0, runId: body.run_id ?? '', body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function main() {
  if (agent) {
    // One open connection per client: each answered a request already.
    await Promise.all(Array.from({ length: count }, () => send(new URL('/healthz', base), 'GET')));
    await new Promise((r) => setTimeout(r, 200));
  }
  const results: unknown[] = [];
  if (process.env.MODE === 'run') {
    for (let i = 0; i < count; i += 1) results.push(await runToEnd());
  } else if (process.env.MODE === 'sequential') {
    for (let i = 0; i < count; i += 1) results.push(strip(await send(url, 'POST')));
  } else {
    results.push(...(await Promise.all(Array.from({ length: count }, () => send(url, 'POST')))).map(strip));
  }
  if (agent) agent.destroy();
  return results;
}

const strip = ({ ms, status, runId }: { ms: number; status: number; runId: string }) => ({ ms, status, runId });

async function runToEnd() {
  const t0 = performance.now();
  const { runId } = await send(url, 'POST');
  const runUrl = new URL(`/api/v1/deployments/${process.env.DEPLOYMENT_ID}/runs/${runId}`, base);
  for (;;) {
    const run = (await send(runUrl, 'GET')).body.data as { status: string; steps: { attempts: number }[] };
    if (['success', 'failed', 'cancelled'].includes(run.status)) {
      return { ms: performance.now() - t0, status: run.status, runId, reruns: run.steps.filter((s) => s.attempts > 1).length };
    }
    await new Promise((r) => setTimeout(r, Number(process.env.POLL_MS ?? 20)));
  }
}

void main().then(
  (results) => process.stdout.write(JSON.stringify(results)),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
