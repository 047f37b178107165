import type { SecretBox } from '../secrets/secret-box';
import { secretReferenceName } from '../secrets/references';

/*
 * A deployment's parameters: declared on the definition, given by a trigger, stored with the run
 * (a secret one only sealed), and seen by each step as the environment variable
 * BOSUN_PARAM_<NAME> — never pasted into a command's text.
 */

export interface ParameterDefinition {
  name: string;
  description?: string | null;
  default?: string | null;
  required?: boolean | null;
  secret?: boolean | null;
  pattern?: string | null;
}

/** A parameter as a run stores it. */
export interface StoredParameter {
  name: string;
  secret?: boolean | null;
  value?: string | null;
  sealed?: string | null;
}

export interface ParameterValue {
  name: string;
  value: string;
  secret: boolean;
}

export const PARAMETER_NAME = /^[a-z][a-z0-9_]{0,62}$/;
export const MAX_PARAMETER_VALUE_LENGTH = 4096;
export const MASK = '********';

export const environmentName = (name: string) => `BOSUN_PARAM_${name.toUpperCase()}`;

/** A parameter's pattern, which must match the whole value; null when it is not a valid regular expression. */
export function wholeValuePattern(pattern: string): RegExp | null {
  try {
    return new RegExp(`^(?:${pattern})$`, 'u');
  } catch {
    return null;
  }
}

const matchesWhole = (pattern: string, value: string) => wholeValuePattern(pattern)?.test(value) ?? false;

/**
 * The values a trigger runs with: those given, else the defaults. Problems (a required one missing,
 * an unknown one, a value its pattern refuses) as [path, message] for a 422; values are never quoted
 * in a message (a secret one could be).
 */
export function resolveParameters(
  definitions: readonly ParameterDefinition[],
  given: Record<string, string>,
): { values: ParameterValue[]; problems: { path: string; message: string }[] } {
  const problems: { path: string; message: string }[] = [];
  const declared = new Set(definitions.map((d) => d.name));
  for (const name of Object.keys(given)) {
    if (!declared.has(name)) problems.push({ path: `parameters.${name}`, message: `Unknown parameter: the deployment declares ${declared.size ? [...declared].join(', ') : 'none'}` });
  }
  const values: ParameterValue[] = [];
  for (const definition of definitions) {
    const value = Object.hasOwn(given, definition.name) ? given[definition.name]! : (definition.default ?? null);
    if (value === null) {
      if (definition.required) problems.push({ path: `parameters.${definition.name}`, message: 'Required: the deployment declares no default' });
      continue;
    }
    if (definition.pattern && !matchesWhole(definition.pattern, value)) {
      problems.push({ path: `parameters.${definition.name}`, message: `Does not match the pattern ${definition.pattern}` });
      continue;
    }
    values.push({ name: definition.name, value, secret: !!definition.secret });
  }
  return { values, problems };
}

const sealedFor = (organizationId: string, name: string) => `run-parameter:${organizationId}:${name}`;

/** As a run stores them: a secret value sealed, bound to its organization and name. */
export const storeParameters = (values: ParameterValue[], secretBox: SecretBox, organizationId: string): StoredParameter[] =>
  values.map(({ name, value, secret }) =>
    secret ? { name, secret, value: null, sealed: secretBox.encrypt(value, sealedFor(organizationId, name)) } : { name, secret, value, sealed: null },
  );

/** A run's parameters in clear (for its steps, and a retry), from what it stored. */
export const openParameters = (run: { organization_id: { toString(): string }; parameters?: readonly StoredParameter[] | null }, secretBox: SecretBox): ParameterValue[] =>
  (run.parameters ?? []).map((p) => ({
    name: p.name,
    secret: !!p.secret,
    // A secret one applied from Git holds its `${secret:NAME}` reference, not a sealed value.
    value: p.secret && p.sealed ? secretBox.decrypt(p.sealed, sealedFor(run.organization_id.toString(), p.name)) : (p.value ?? ''),
  }));

/** What a step's command sees. */
export const parameterEnvironment = (values: ParameterValue[]): Record<string, string> =>
  Object.fromEntries(values.map((p) => [environmentName(p.name), p.value]));

/** Values to redact from output and logs. */
export const secretParameterValues = (values: ParameterValue[]) => values.filter((p) => p.secret && p.value).map((p) => p.value);

/** As the API shows them: secret ones masked (a `${secret:NAME}` reference is no secret: shown as written). */
export const maskedParameters = (parameters: readonly StoredParameter[] | null | undefined): Record<string, string> =>
  Object.fromEntries((parameters ?? []).map((p) => [p.name, p.secret && !secretReferenceName(p.value) ? MASK : (p.value ?? '')]));

/** What an Idempotency-Key covers besides the deployment: the parameters given, keyed (secret ones must not be guessable from it). */
export const requestDigest = (given: Record<string, string>, secretBox: SecretBox) =>
  secretBox.digest(JSON.stringify(Object.keys(given).sort().map((name) => [name, given[name]])), 'trigger-request');
