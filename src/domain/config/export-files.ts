import { Document, Scalar, parse, visit } from 'yaml';
import { CONFIG_KINDS, type ConfigFile, type ConfigKind } from './types';

/*
 * The export's YAML: one file per kind, documents by name, and text that reads back to exactly the
 * same specs, written the same way every time (export → apply → export is byte-identical).
 */

export const CONFIG_EXPORT_FILES: Record<ConfigKind, string> = {
  Deployment: 'deployments.yaml',
  Pipeline: 'pipelines.yaml',
  Schedule: 'schedules.yaml',
  Freeze: 'freezes.yaml',
  Team: 'teams.yaml',
  ServiceAccount: 'service-accounts.yaml',
  RoleBinding: 'role-bindings.yaml',
  NotificationChannel: 'notification-channels.yaml',
  Policy: 'policy.yaml',
};

export interface ExportedObject {
  kind: ConfigKind;
  name: string;
  spec: Record<string, unknown>;
}

// compat: a string YAML 1.1 would read as something else (yes, on, 0o17) is quoted for older readers too.
const DOCUMENT_OPTIONS = { compat: 'yaml-1.1', aliasDuplicateObjects: false } as const;
const TEXT_OPTIONS = { lineWidth: 0, blockQuote: 'literal' } as const;

/** Code point order, the same in every language (UTF-16 order puts 😀 before ｆ). */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}

const textOf = (value: unknown) => new Document(value, DOCUMENT_OPTIONS).toString(TEXT_OPTIONS);

/** yaml writes some strings as block literals that read back otherwise (lines of spaces only, kept): those are quoted. */
const literalReadsBack = (text: string) => (parse(textOf({ v: text }), { schema: 'core' }) as { v: unknown }).v === text;

function documentText({ kind, name, spec }: ExportedObject): string {
  const doc = new Document({ kind, name, spec }, DOCUMENT_OPTIONS);
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && node.value.includes('\n') && !literalReadsBack(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString(TEXT_OPTIONS);
}

/** The organization's definitions as files: one per kind that has any, documents sorted by name. */
export function formatConfigFiles(objects: readonly ExportedObject[]): ConfigFile[] {
  return CONFIG_KINDS.flatMap((kind) => {
    const ofKind = objects.filter((o) => o.kind === kind).sort((a, b) => compareCodePoints(a.name, b.name));
    if (ofKind.length === 0) return [];
    const header = `# ${kind} definitions exported by Bosun (bosun config export)\n`;
    return [{ path: CONFIG_EXPORT_FILES[kind], content: header + ofKind.map(documentText).join('---\n') }];
  });
}
