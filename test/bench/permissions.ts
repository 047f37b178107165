import { Types } from 'mongoose';
import { coversAllServers, deniedServers, targetLimitMet } from '../../src/domain/access/grants';
import { identityAccess } from '../../src/domain/access/identities';
import { accessCache } from '../../src/domain/access/cache';
import { IdentityModel, RoleBindingModel, TeamModel } from '../../src/domain/access/model';
import { OrganizationModel } from '../../src/domain/organizations/model';
import { runBench } from './harness';

/*
 * What checking permissions costs a trigger, in CPU of the API process: looking up the caller's
 * identity, teams and role bindings (three queries) and judging a run's targets against them, for
 * an identity with 1,000 bindings (each limited to other tags, so none answers early) beside one with
 * a single binding, measured in the same run. `npm run bench:permissions`.
 */

const ROUNDS = 300;
const TARGETS = 50;

async function cpuPerCheck(identityId: string, servers: { _id: Types.ObjectId; tags: string[] }[], deploymentId: string, mode: 'request' | 'judge' | 'cold' = 'request'): Promise<number> {
  const held = (await identityAccess(identityId))!;
  const check = async () => {
    if (mode === 'cold') accessCache.changed();
    const access = mode === 'judge' ? held : (await identityAccess(identityId))!;
    const principal = { grants: access.grants, scopes: ['admin'] };
    const context = { deploymentId, targetCount: servers.length };
    if (!coversAllServers(principal, 'deployments:run', context)) {
      if (targetLimitMet(principal, 'deployments:run', servers.length, context) !== null) throw new Error('limited');
      if (deniedServers(principal, 'deployments:run', servers, context).length) throw new Error('denied');
    }
  };
  for (let i = 0; i < 20; i += 1) await check();
  const start = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i += 1) await check();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / ROUNDS / 1000;
}

runBench({ worker: false }, async () => {
  const organization = await OrganizationModel.create({ slug: 'bench-permissions', name: 'bench' });
  const org = organization._id;
  const person = (name: string) => IdentityModel.create({ organization_id: org, type: 'service_account', name });
  const [many, one] = await Promise.all([person('ci-many'), person('ci-one')]);
  const team = await TeamModel.create({ organization_id: org, name: 'many', members: [many._id] });
  const bindings = Array.from({ length: 999 }, (_, i) => ({ organization_id: org, role: 'operator', subject: { type: 'team', id: team._id }, server_tags: [`zone-${i}`, 'web'], deployments: null, max_targets_per_run: 100 }));
  await RoleBindingModel.insertMany([...bindings, { organization_id: org, role: 'operator', subject: { type: 'service_account', id: many._id }, server_tags: ['web'], deployments: null, max_targets_per_run: null }]);
  await RoleBindingModel.create({ organization_id: org, role: 'operator', subject: { type: 'service_account', id: one._id }, server_tags: ['web'], deployments: null, max_targets_per_run: null });
  const servers = Array.from({ length: TARGETS }, () => ({ _id: new Types.ObjectId(), tags: ['web', 'eu'] }));
  const deploymentId = new Types.ObjectId().toString();

  const baseline = await cpuPerCheck(one._id.toString(), servers, deploymentId);
  const heavy = await cpuPerCheck(many._id.toString(), servers, deploymentId);
  const judging = await cpuPerCheck(many._id.toString(), servers, deploymentId, 'judge');
  const cold = await cpuPerCheck(many._id.toString(), servers, deploymentId, 'cold');
  console.log(`permission check of a ${TARGETS}-target trigger, CPU of the API process per check (${ROUNDS} rounds):`);
  console.log(`  1 binding                      ${baseline.toFixed(3)} ms  (the identity read, as every request reads it, and the judgement)`);
  console.log(`  1,000 bindings                 ${heavy.toFixed(3)} ms  (${(heavy / baseline).toFixed(1)}× the single binding)`);
  console.log(`    of which judging the targets ${judging.toFixed(3)} ms`);
  console.log(`  1,000 bindings, just changed   ${cold.toFixed(3)} ms  (the first request after a change reads and compiles them)`);
  console.log(heavy < 1 ? '  under 1 ms at 1,000 bindings: yes' : '  under 1 ms at 1,000 bindings: NO');
});
