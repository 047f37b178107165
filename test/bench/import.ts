import { Types } from 'mongoose';
import { bearer } from '../support/bosun';
import { OrganizationModel } from '../../src/domain/organizations/model';
import { ServerModel } from '../../src/domain/servers/model';
import { runBench } from './harness';

/*
 * How long `POST /servers/import` takes to answer a dry run of a 1,000-host Ansible inventory
 * (half ranges, half one line each with vars, groups of groups, a bastion), through HTTP: into an
 * empty organization, and again once the 1,000 servers exist from that source (the diff of a
 * re-import, 10 hosts gone). Goal: under 2 s. `npm run bench:import`.
 */

const ROUNDS = 7;
const HOSTS = 1000;

function inventory(skip = 0): string {
  const lines = ['bastion1 ansible_host=203.0.113.10', '[web]', 'web[0001:0499].example.com', '[db]'];
  for (let i = 1 + skip; i <= HOSTS - 500; i++) lines.push(`db${String(i).padStart(4, '0')} ansible_host=10.1.${Math.floor(i / 250)}.${i % 250} ansible_port=2222`);
  lines.push('[eu:children]', 'web', 'db', '[eu:vars]', "ansible_ssh_common_args='-J bastion1'", '[all:vars]', 'ansible_user=deploy');
  return lines.join('\n');
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

runBench({ worker: false }, async (bosun) => {
  const token = await bosun.token('bench-import');
  const dryRun = async (content: string) => {
    const started = performance.now();
    const res = await bosun.api.post('/api/v1/servers/import').set(bearer(token)).send({ format: 'ansible-ini', source: 'bench', content, dry_run: true });
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`import answered ${res.status}: ${JSON.stringify(res.body)}`);
    return { ms, counts: res.body.data.counts };
  };
  const measure = async (label: string, content: string) => {
    const times: number[] = [];
    let counts: unknown;
    for (let i = 0; i < ROUNDS; i++) ({ ms: times[i], counts } = await dryRun(content));
    console.log(`${label}: median ${median(times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms over ${ROUNDS} dry runs; ${JSON.stringify(counts)}`);
  };

  await measure(`dry run of ${HOSTS} hosts, none in Bosun yet`, inventory());

  // The servers as an apply would have left them (inserted directly: verification is not what is measured).
  const organization_id = (await OrganizationModel.findOne({ slug: 'bench-import' }).orFail())._id;
  const preview = (await bosun.api.post('/api/v1/servers/import').set(bearer(token)).send({ format: 'ansible-ini', source: 'bench', content: inventory(), dry_run: true })).body.data;
  await ServerModel.insertMany(
    preview.add.map((a: { title: string; host: string; port: number; username: string; tags: string[]; via: string[] }) => ({
      _id: new Types.ObjectId(), organization_id, title: a.title, host: a.host, port: a.port, username: a.username, tags: a.tags,
      auth_method: 'password', credentials: 'sealed-elsewhere', inventory: { source: 'bench', name: a.title, tags: a.tags, via: a.via },
    })),
  );
  await measure(`re-import dry run against ${preview.add.length} existing servers, 10 hosts gone`, inventory(10));
});
