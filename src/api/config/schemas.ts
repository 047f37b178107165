import { z } from 'zod';
import { CONFIG_KINDS } from '../../domain/config/types';

/*
 * The bodies of POST /config/plan and /config/apply, and what a plan answers. The files travel as
 * text: the limits per file and on documents are the files layer's (413 / 422 naming them).
 */

export const SOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const file = z.strictObject({
  path: z.string().min(1).max(512).describe('The file’s path in the repository, relative and `/`-separated (`deploy/web.yaml`)'),
  content: z.string().describe('The file’s YAML text: one or many documents `{ kind, name, spec }`'),
});

export const planRequestSchema = z.strictObject({
  source: z
    .string()
    .regex(SOURCE_NAME, 'letters, digits, dot, dash and underscore, at most 64, starting with a letter or digit')
    .describe('The name of where the files come from (a repository): objects applied carry it in `managed_by`, and prune deletes only its own'),
  revision: z
    .string()
    .regex(/^[0-9a-f]{7,64}$/, 'a Git commit id (hex)')
    .nullable()
    .default(null)
    .describe('The commit the files are at, recorded in `managed_by` and the audit trail'),
  files: z.array(file).max(2000, 'at most 2000 files').describe('Every definition file of the source (what is not in them is what prune deletes)'),
  web_url: z
    .string()
    .regex(/^https:\/\/[A-Za-z0-9.-]+(:\d+)?(\/[^\s]*)?$/, 'an https URL (the repository’s web page: https://github.com/acme/platform)')
    .max(500)
    .nullable()
    .default(null)
    .describe('The repository’s web page: each object applied links its file there (`<web_url>/blob/<revision>/<path>`, as GitHub, GitLab and Gitea show files)'),
  prune: z.boolean().default(false).describe('Delete the objects this source applied before that the files no longer hold'),
});

export const applyRequestSchema = planRequestSchema.extend({
  plan_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'a plan’s plan_hash')
    .optional()
    .describe('The plan reviewed: if the plan of these files is another now (the organization changed since), 409 plan_changed and nothing is applied'),
});

export type PlanRequest = z.infer<typeof planRequestSchema>;
export type ApplyRequest = z.infer<typeof applyRequestSchema>;

const kind = z.enum(CONFIG_KINDS);
const named = z.strictObject({ kind, name: z.string() });
const fieldChange = z.strictObject({ from: z.unknown(), to: z.unknown() });

const problem = z.strictObject({
  file: z.string(),
  line: z.number().int(),
  column: z.number().int(),
  kind: z.string().nullable(),
  name: z.string().nullable(),
  message: z.string(),
  text: z.string().describe('`file:line:column: message`'),
});

export const planSchema = z.strictObject({
  plan_hash: z.string().describe('Binds an apply to this plan (`plan_hash` of POST /config/apply)'),
  source: z.string(),
  revision: z.string().nullable(),
  create: z.array(named.extend({ path: z.string() })),
  update: z.array(
    named.extend({
      path: z.string(),
      reason: z.enum(['changed', 'drifted', 'adopted', 'moved']).describe('changed: the files differ; drifted: changed by another path since; adopted: made by hand, taken over; moved: another file now'),
      fields: z.record(z.string(), fieldChange).describe('Each field that changes, by its path in the spec (`steps[2].command`)'),
    }),
  ),
  delete: z.array(named).describe('With prune only: objects this source applied that the files no longer hold'),
  unchanged: z.array(named),
  drift: z.array(named.extend({ path: z.string(), forced_at: z.string().nullable(), forced_by: z.string().nullable() })).describe('Objects this source applied that were changed since by another path'),
  errors: z.array(problem).describe('Every problem of the files: while any stands, nothing is applied'),
  warnings: z.array(problem),
});

export type Plan = z.infer<typeof planSchema>;
export type PlanProblem = z.infer<typeof problem>;

export const exportQuerySchema = z.strictObject({
  kinds: z
    .string()
    .regex(new RegExp(`^(${CONFIG_KINDS.join('|')})(,(${CONFIG_KINDS.join('|')}))*$`), `a comma-separated list of ${CONFIG_KINDS.join(', ')}`)
    .optional()
    .describe('Only these kinds (comma-separated); every kind without it'),
});
