import { Types } from 'mongoose';
import { z } from 'zod';
import { accessCache } from '../../../domain/access/cache';
import { RoleBindingModel, type RoleBinding } from '../../../domain/access/model';
import type { NameIndex, ReferenceKind, SpecProblem } from '../../../domain/config/types';
import { bindingServers, maxTargets, roleBindingName, roleField } from '../../people/schemas';
import { checked, lastAdminBlocker, managedByOf, namesOf, resolve, schemaProblems, type NamedKindAdapter } from './references-b';

/** How a file names a subject, and what it is stored as. */
const SUBJECTS = { team: ['Team', 'team'], 'service-account': ['ServiceAccount', 'service_account'], person: ['Person', 'person'] } as const;
type SubjectPrefix = keyof typeof SUBJECTS;
const SUBJECT_PATTERN = /^(team|service-account|person):(.+)$/;
const PREFIX_OF: Record<string, SubjectPrefix> = { team: 'team', service_account: 'service-account', person: 'person' };

/** A role binding's spec: the create body with its subject and deployments by name. */
const fileSchema = z.strictObject({
  role: roleField,
  subject: z.string().regex(SUBJECT_PATTERN, 'a subject is "team:NAME", "service-account:NAME" or "person:EMAIL"').describe('team:web, service-account:ci or person:ada@example.com'),
  servers: bindingServers.default(null),
  deployments: z
    .array(z.string().min(1).max(120))
    .min(1, 'at least one deployment (null: every deployment)')
    .max(1000)
    .nullable()
    .default(null)
    .describe('Deployments by name; null: every deployment'),
  max_targets_per_run: maxTargets.default(null),
});
type BindingSpec = z.infer<typeof fileSchema>;

const givesAdminEverywhere = (b: Pick<RoleBinding, 'role' | 'server_tags' | 'deployments' | 'max_targets_per_run'>) => b.role === 'admin' && !b.server_tags && !b.deployments && !b.max_targets_per_run;

/** The binding's references as ids (every name known: the spec was checked), or the problems of those that are not. */
function referencesOf(spec: BindingSpec, names: NameIndex, problems: SpecProblem[]) {
  const [, prefix, name] = SUBJECT_PATTERN.exec(spec.subject)!;
  const [kind, type] = SUBJECTS[prefix as SubjectPrefix] as readonly [ReferenceKind, 'team' | 'service_account' | 'person'];
  const subjectId = resolve(names, kind, name!, ['subject'], problems);
  const deployments = spec.deployments && [...new Set(spec.deployments.map((d, i) => resolve(names, 'Deployment', d, ['deployments', i], problems)))];
  return { subject: { type, id: subjectId, name: names.nameOf(kind, subjectId ?? '') }, deployments };
}

function bindingSpec(spec: BindingSpec, subject: string, deployments: string[] | null): Record<string, unknown> {
  return { role: spec.role, subject, servers: spec.servers, deployments, max_targets_per_run: spec.max_targets_per_run };
}

/** Role bindings owned by name (bindings made through the API without one are not files' to own). */
export const roleBindingKind: NamedKindAdapter = {
  kind: 'RoleBinding',
  fileSchema,
  nameSchema: roleBindingName,

  async current(organizationId, names) {
    const found = await RoleBindingModel.find({ organization_id: new Types.ObjectId(organizationId), name: { $type: 'string' } }).sort({ name: 1 }).lean<RoleBinding[]>();
    return found.map((b) => {
      const prefix = PREFIX_OF[b.subject.type]!;
      const subject = `${prefix}:${namesOf(names, SUBJECTS[prefix][0], [b.subject.id])[0]}`;
      const deployments = b.deployments ? namesOf(names, 'Deployment', b.deployments) : null;
      const spec = { role: b.role, subject, servers: b.server_tags ? { tags: [...b.server_tags] } : null, deployments, max_targets_per_run: b.max_targets_per_run ?? null };
      return { id: b._id.toString(), name: b.name!, spec, managed_by: managedByOf(b.managed_by) };
    });
  },

  async check(spec, context) {
    const parsed = fileSchema.safeParse(spec);
    if (!parsed.success) return checked(schemaProblems(parsed.error), () => ({}));
    const problems: SpecProblem[] = [];
    const { subject, deployments } = referencesOf(parsed.data, context.names, problems);
    return checked(problems, () =>
      bindingSpec(parsed.data, `${PREFIX_OF[subject.type]}:${subject.name}`, deployments && deployments.map((id) => context.names.nameOf('Deployment', id!)!)),
    );
  },

  async write(context, object) {
    const spec = fileSchema.parse(object.spec);
    const { subject, deployments } = referencesOf(spec, context.names, []);
    const fields = {
      name: object.name,
      role: spec.role,
      subject: { type: subject.type, id: new Types.ObjectId(subject.id!) },
      server_tags: spec.servers?.tags ?? null,
      deployments: deployments && deployments.map((id) => new Types.ObjectId(id!)),
      max_targets_per_run: spec.max_targets_per_run,
      managed_by: object.managed_by,
    };
    const organization_id = new Types.ObjectId(context.organizationId);
    if (!object.existing) await RoleBindingModel.create([{ _id: new Types.ObjectId(object.id), organization_id, ...fields }], { session: context.session });
    else await RoleBindingModel.updateOne({ _id: new Types.ObjectId(object.id), organization_id }, { $set: fields }, { session: context.session });
  },

  async remove(context, id) {
    await RoleBindingModel.deleteOne({ _id: new Types.ObjectId(id), organization_id: new Types.ObjectId(context.organizationId) }, { session: context.session });
  },

  async pruneBlocker(organizationId, id) {
    const binding = await RoleBindingModel.findOne({ _id: new Types.ObjectId(id), organization_id: new Types.ObjectId(organizationId) }).lean<RoleBinding>();
    return binding && givesAdminEverywhere(binding) ? lastAdminBlocker(organizationId, { bindingGone: id }) : null;
  },

  // Rights are kept between requests: what was read while the transaction was open is stale now it committed.
  async afterApply() {
    accessCache.changed();
  },
};
