import { SECRET_NAME } from '../secrets/names';
import type { SpecPath } from './types';

/** A `${secret:NAME}` in a string of a spec; `malformed` when NAME is not a secret's name or the `}` is missing. */
export interface SecretReference {
  name: string;
  path: SpecPath;
  malformed: boolean;
}

const REFERENCE = /\$\{secret:([^}]*)(\}?)/g;

/** Every secret reference in the spec's string values, in the order they are written. */
export function secretReferences(spec: unknown): SecretReference[] {
  const found: SecretReference[] = [];
  const visit = (value: unknown, path: Array<string | number>) => {
    if (typeof value === 'string') {
      for (const [, name, close] of value.matchAll(REFERENCE)) found.push({ name: name!, path: [...path], malformed: close === '' || !SECRET_NAME.test(name!) });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => visit(item, [...path, i]));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) visit(item, [...path, key]);
    }
  };
  visit(spec, []);
  return found;
}
