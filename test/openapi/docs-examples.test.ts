import { sharedBosun, type SharedBosun } from '../support/shared-bosun';
import { eventually } from '../support/eventually';
import { asUser, type User } from '../support/client';
import { differences, jsonExamples } from '../support/doc-examples';

/*
 * docs/api.md's JSON examples are what the API answers. Each example is claimed below by the heading
 * it is under, and made on the real stack by the request it documents, in an organization of its
 * own: the answer has the example's fields and no others, at every depth, and the example's values
 * wherever they are not ids, times or the machine's own (test/support/doc-examples.ts).
 */

type Json = any;

/** What a story answers: the body to hold to the example, and the paths whose values are the machine's. */
interface Answer {
  body: Json;
  varying?: string[];
}

/** Where the test's servers differ from the example's: their address, login and what they run. */
const SERVER_OF_THIS_MACHINE = ['host', 'port', 'username', 'host_key_fingerprint', 'fingerprint.os.*', 'fingerprint.cpu_cores', 'fingerprint.ram', 'fingerprint.disk'];

describe('docs/api.md examples are what the API answers', () => {
  let bosun: SharedBosun;
  beforeAll(async () => {
    bosun = await sharedBosun();
  });
  afterAll(() => bosun.stop());

  /** The user of a new organization with a token of this name (a service account's), and its server web-1. */
  const organization = async (org: string, tokenName: string, server: { tags?: string[] } = {}) => {
    const user = await asUser(bosun, org, await bosun.token(org, ['admin'], tokenName));
    const serverId = await user.addServer({ title: 'web-1', ...server });
    return { user, serverId };
  };
  const get = async (user: User, path: string) => {
    const res = await user.request('get', path);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  /** A run of web-release by the token ci-pipeline: its trigger's answer, and the run once it succeeded. */
  let released: Promise<{ triggered: Json; run: Json }> | undefined;
  const release = () =>
    (released ??= (async () => {
      const { user, serverId } = await organization('docs-runs', 'ci-pipeline');
      const deployment = await user.defineDeployment(serverId, [{ name: 'pull', command: `echo 'Already up to date.'; echo "commit=4f2c9e1" >> "$BOSUN_OUTPUT"` }], 'web-release');
      const triggered = await user.trigger(deployment.id);
      const run = await user.waitForRun(deployment.id, triggered.run_id);
      return { triggered, run: await get(user, `/deployments/${deployment.id}/runs/${run.id}`) };
    })());

  const stories: Record<string, () => Promise<Answer>> = {
    'List — `GET /servers?page=1&per_page=12` (scope `read`)': async () => {
      const { user } = await organization('docs-servers-list', 'ci-pipeline', { tags: ['web', 'eu'] });
      const body = await get(user, '/servers?page=1&per_page=12');
      return { body, varying: SERVER_OF_THIS_MACHINE.map((path) => `data.*.${path}`) };
    },

    'Read one — `GET /servers/{id}` (scope `read`)': async () => {
      const { user, serverId } = await organization('docs-servers-read', 'ci-pipeline', { tags: ['web', 'eu'] });
      return { body: await get(user, `/servers/${serverId}`), varying: SERVER_OF_THIS_MACHINE.map((path) => `data.${path}`) };
    },

    'Its activity — `GET /servers/{id}/activity?limit=20` (scope `read`)': async () => {
      const { user, serverId } = await organization('docs-activity', 'ci', { tags: ['web'] });
      const fleet = await user.define({
        name: 'release',
        targets: { tags: ['web'] },
        steps: [
          { name: 'pull', command: 'true' },
          { name: 'migrate', command: 'exit 3' },
          { name: 'restart', command: 'true' },
        ],
      });
      await user.runToEnd(fleet.id);
      const ops = await asUser(bosun, 'docs-activity', await bosun.token('docs-activity', ['admin'], 'ops'));
      await ops.converse(serverId, 'show uptime');
      return { body: await get(user, `/servers/${serverId}/activity?limit=20`) };
    },

    'Trigger — `POST /deployments/{id}/run` (scope `deployments:run`)': async () => ({ body: (await release()).triggered }),

    'Read a run — `GET /deployments/{id}/runs/{run_id}` (scope `read`)': async () => ({
      body: (await release()).run,
      // The example's step is a real one; the test's server runs a stand-in that says the same.
      varying: ['data.steps.*.command', 'data.targets.*.host'],
    }),

    'A conversation — `GET /conversations/{id}` (scope `read`)': async () => {
      const { serverId } = await organization('docs-conversations', 'ci-pipeline');
      const ops = await asUser(bosun, 'docs-conversations', await bosun.token('docs-conversations', ['admin'], 'ops'));
      const conversation = await ops.converse(serverId, 'show uptime');
      return { body: await get(ops, `/conversations/${conversation.id}`), varying: ['data.steps.*.execution_log'] };
    },

    'An audit entry — `GET /audit?action=run.trigger` (role `admin` or `auditor`)': async () => {
      await release();
      const auditor = await asUser(bosun, 'docs-runs', await bosun.token('docs-runs', ['audit:read'], 'auditor'));
      const body = await eventually(() => get(auditor, '/audit?action=run.trigger'), (page) => page.data.length === 1);
      return { body, varying: ['data.*.source_address'] };
    },

    Errors: async () => {
      const { user } = await organization('docs-errors', 'ci-pipeline');
      const res = await user.request('post', '/servers', { title: 'web-1', host: '10.0.0.5', port: 70000, username: 'deploy', auth_method: 'password', password: 'secret' });
      return { body: res.body };
    },
  };

  const examples = jsonExamples('api.md');

  test.each(examples.map((example) => [`${example.heading} (line ${example.line})`, example] as const))('%s', async (_name, example) => {
    const story = stories[example.heading];
    if (!story) throw new Error(`No story makes the example under "${example.heading}" (docs/api.md line ${example.line}): add one here`);
    const { body, varying } = await story();
    expect(differences(example.json, body, varying)).toEqual([]);
  }, 120_000);

  test('every story has its example', () => {
    expect(Object.keys(stories).filter((heading) => !examples.some((example) => example.heading === heading))).toEqual([]);
  });
});
