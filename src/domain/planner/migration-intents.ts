import { asUser, packageListCommand, privileged } from './os-family';
import { NAME, PATH, trimSentenceEnd } from './phrases';
import { shellQuote as q } from '../shell';
import { transferCommand } from './transfer';
import type { PlannedStep, Risk, ServerContext } from './types';

/** An intent only a migration plan has: it moves or compares data between the source and the target. */
export interface MigrationIntent {
  id: string;
  label: string;
  risk: Risk;
  pattern: RegExp;
  build(match: RegExpMatchArray, servers: { source: ServerContext; target: ServerContext }): Omit<PlannedStep, 'target' | 'risk'> | null;
}

const SOURCE = '(?:the\\s+)?(?:source|old)(?:\\s+server)?';
const TARGET = '(?:the\\s+)?(?:target|new)(?:\\s+server)?';

type Engine = 'postgres' | 'mysql' | 'sqlite';
const engineOf = (word: string): Engine => (/^(?:postgres|postgresql|pg)$/i.test(word) ? 'postgres' : /^(?:mysql|mariadb)$/i.test(word) ? 'mysql' : 'sqlite');

/** The dump on the source and the restore on the target, for each engine; a restore into the target replaces what it holds. */
function databaseCommands(engine: Engine, name: string, restoreTo: string, servers: { source: ServerContext; target: ServerContext }) {
  switch (engine) {
    case 'postgres':
      return {
        source_command: asUser(servers.source, 'postgres', `pg_dump --format=custom --no-owner ${q(name)}`),
        target_command: asUser(servers.target, 'postgres', `sh -c ${q(`createdb ${q(name)} 2>/dev/null; exec pg_restore --clean --if-exists --no-owner -d ${q(name)}`)}`),
      };
    case 'mysql':
      return {
        source_command: privileged(servers.source, `mysqldump --single-transaction --routines --triggers --databases ${q(name)}`),
        target_command: privileged(servers.target, 'mysql'),
      };
    case 'sqlite':
      // Restored into a new file first, which replaces the database in one rename once the restore succeeded.
      return {
        source_command: `sqlite3 ${q(name)} .dump`,
        target_command: `sh -c 'mkdir -p "$(dirname "$1")" && rm -f "$1.restoring" && sqlite3 "$1.restoring" && mv -f "$1.restoring" "$1"' restore ${q(restoreTo)}`,
      };
  }
}

export const MIGRATION_INTENTS: MigrationIntent[] = [
  {
    id: 'copy_database', label: 'dump a database (postgres, mysql, sqlite) on the source and restore it on the target', risk: 'change',
    pattern: new RegExp(
      `\\b(?:dump|copy|migrate|transfer|move)(?:\\s+and\\s+restore)?\\s+(?:the\\s+)?(postgres(?:ql)?|pg|mysql|mariadb|sqlite3?)\\s+(?:database|db)\\s+(?:${PATH}|${NAME})` +
        // A SQLite file may land elsewhere on the target.
        `(?:\\s+(?:to|into|as)\\s+(?:${TARGET}\\s+(?:at|as|in)\\s+)?${PATH})?`,
      'i',
    ),
    build: (m, servers) => {
      const engine = engineOf(m[1]!);
      const name = m[2] ? trimSentenceEnd(m[2]) : m[3];
      if (!name || (engine === 'sqlite') !== Boolean(m[2])) return null;
      const restoreTo = m[4] ? trimSentenceEnd(m[4]) : name;
      const transfer = { kind: 'pipe' as const, ...databaseCommands(engine, name, restoreTo, servers) };
      return {
        title: `Dump the ${engine} database ${name} on the source and restore it on the target${restoreTo !== name ? ` as ${restoreTo}` : ''}`,
        command: transferCommand(transfer),
        transfer,
      };
    },
  },
  {
    id: 'compare_packages', label: 'compare the installed packages of the source and the target', risk: 'read',
    pattern: /\b(?:compare|diff)\b.*\bpackages?\b|\bpackages?\b.*\b(?:compare|differ|diff)/i,
    build: (_m, servers) => {
      const transfer = { kind: 'compare' as const, source_command: packageListCommand(servers.source), target_command: packageListCommand(servers.target) };
      return { title: 'Compare the installed packages of the source and the target', command: transferCommand(transfer), transfer };
    },
  },
  {
    id: 'copy_directory', label: 'copy a directory from the source to the target', risk: 'change',
    pattern: new RegExp(
      `\\b(?:copy|transfer|migrate|sync)\\s+(?:over\\s+)?(?:the\\s+)?(?:directory\\s+|folder\\s+|files\\s+(?:in|of|under)\\s+|contents\\s+of\\s+)?${PATH}` +
        `(?:\\s+(?:directory|folder))?(?:\\s+(?:from|on)\\s+${SOURCE})?` +
        `(?:\\s+(?:to|onto|into)\\s+(?:${TARGET}(?:\\s+(?:at|as|in|into|under)\\s+${PATH})?|${PATH}(?:\\s+on\\s+${TARGET})?))?`,
      'i',
    ),
    build: (m) => {
      const from = trimSentenceEnd(m[1]!).replace(/(.)\/+$/, '$1');
      const to = trimSentenceEnd(m[2] ?? m[3] ?? from).replace(/(.)\/+$/, '$1');
      if (!from.startsWith('/') || !to.startsWith('/')) return null;
      const transfer = { kind: 'copy' as const, from, to };
      return { title: `Copy ${from} from the source to ${to} on the target`, command: transferCommand(transfer), transfer };
    },
  },
];
