/**
 * Triggers from a process of their own, as CI jobs send them: each on a new connection, timed from
 * the request's start to the end of its answer; COUNT of them at once (MODE=concurrent) or one after
 * the other (MODE=sequential). Prints [{ ms, status, runId }] as JSON. Input from the environment:
 * BOSUN_URL, BOSUN_TOKEN, DEPLOYMENT_ID, COUNT, MODE.
 */
import http from 'node:http';

const url = new URL(`/api/v1/deployments/${process.env.DEPLOYMENT_ID}/run`, process.env.BOSUN_URL);
const count = Number(process.env.COUNT ?? 50);

function trigger(): Promise<{ ms: number; status: number; runId: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { method: 'POST', agent: false, headers: { authorization: `Bearer ${process.env.BOSUN_TOKEN}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = performance.now() - t0;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { run_id?: string };
        resolve({ ms, status: res.statusCode ?? 0, runId: body.run_id ?? '' });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function sequential() {
  const results = [];
  for (let i = 0; i < count; i += 1) results.push(await trigger());
  return results;
}

void (process.env.MODE === 'sequential' ? sequential() : Promise.all(Array.from({ length: count }, trigger))).then(
  (results) => process.stdout.write(JSON.stringify(results)),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
