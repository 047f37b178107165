import { BosunProcesses, externalServicesEnv } from '../support/processes';

/*
 * Each pooled SSH connection is one open file of the worker: a worker whose limit cannot hold
 * SSH_POOL_MAX of them beside its other files says so as it starts (a connection would otherwise fail
 * with EMFILE in the middle of a run, once the pool fills), and one whose limit can says nothing.
 * Started as `npm start --role worker` is, under a limit of 1,024 files (a common default).
 */

const WARNING = /SSH_POOL_MAX=(\d+) wants about \d+ open files, and this process may open 1024/;

describe('a worker whose open files cannot hold SSH_POOL_MAX connections', () => {
  const fleetSized = new BosunProcesses({ ...externalServicesEnv('open-files-1100'), SSH_POOL_MAX: '1100' });
  const byDefault = new BosunProcesses(externalServicesEnv('open-files-default'));
  afterAll(() => Promise.all([fleetSized.stop(), byDefault.stop()]));

  test('says so when it starts (SSH_POOL_MAX 1100 under 1,024 files); with the default 256, it does not', async () => {
    const [large, small] = await Promise.all([fleetSized.launch('worker', { openFiles: 1024 }), byDefault.launch('worker', { openFiles: 1024 })]);
    await Promise.all([large.ready(), small.ready()]);
    const said = (p: typeof large) => `${p.stdout}\n${p.stderr}`;
    expect(WARNING.exec(said(large))?.[1]).toBe('1100');
    expect(said(small)).not.toMatch(WARNING);
  });
});
