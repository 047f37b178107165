/**
 * A fleet of CI jobs' side of bench:triggers, in a process of its own: RATE triggers a second for
 * SECONDS, spread evenly, round robin over TARGETS (a JSON list of { token, deploymentId }: each CI
 * token triggering its own deployment), each on a keep-alive connection of its token's, timed from the
 * request's start to the end of its answer. Beside each trigger, half a period later, a `GET /healthz`
 * on its own connection: the HTTP floor of the same process at the same moment. Prints
 * { triggers: [{ ms, status, runId }], health: [ms] } as JSON.
 */
import http from 'node:http';

const base = process.env.BOSUN_URL!;
const rate = Number(process.env.RATE ?? 10);
const seconds = Number(process.env.SECONDS ?? 60);
const targets = JSON.parse(process.env.TARGETS ?? '[]') as Array<{ token: string; deploymentId: string }>;

function send(agent: http.Agent, target: URL, method: string, token?: string): Promise<{ ms: number; status: number; runId: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(target, { method, agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = performance.now() - t0;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { run_id?: string };
        resolve({ ms, status: res.statusCode ?? 0, runId: body.run_id ?? '' });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function main() {
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 4 }));
  const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const health = new URL('/healthz', base);
  // Every connection opened (and answered once) before the clock starts.
  await Promise.all([...agents, healthAgent].map((agent) => send(agent, health, 'GET')));
  const total = rate * seconds;
  const periodMs = 1000 / rate;
  const started = performance.now();
  const triggers: Array<Promise<{ ms: number; status: number; runId: string }>> = [];
  const floors: Array<Promise<number>> = [];
  for (let i = 0; i < total; i += 1) {
    const due = started + i * periodMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const which = i % targets.length;
    const { token, deploymentId } = targets[which]!;
    triggers.push(send(agents[which]!, new URL(`/api/v1/deployments/${deploymentId}/run`, base), 'POST', token));
    setTimeout(() => floors.push(send(healthAgent, health, 'GET').then((r) => r.ms)), periodMs / 2);
  }
  const answered = await Promise.all(triggers);
  await new Promise((r) => setTimeout(r, periodMs));
  const floor = await Promise.all(floors);
  [...agents, healthAgent].forEach((agent) => agent.destroy());
  return { triggers: answered, health: floor };
}

void main().then(
  (result) => {
    process.stdout.write(JSON.stringify(result));
    process.exit(0);
  },
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
