import { LineCounter, isScalar, type Document, type Node } from 'yaml';
import type { ConfigDocument, ConfigFile, ConfigProblem, FilePosition, ParsedFiles } from './types';
import { checkNodes, type NodeProblem } from './yaml-nodes';
import { checkShape } from './document-shape';
import { specOffsetOf } from './spec-positions';
import { CONFIG_FLOW_DEPTH_LIMIT, yamlDocuments } from './yaml-stream';

/*
 * Config files (issue 38) read into documents `{ kind, name, spec }` with where each part is, and
 * every problem of every file at once, each at its file, line and column. What is inside a spec is
 * each kind's adapter's to check; here, only that it is plain JSON written as YAML allows.
 */

export const CONFIG_FILE_LIMIT_BYTES = 5 * 1024 * 1024;
export const CONFIG_DOCUMENT_LIMIT = 2_000;
export const CONFIG_PATH_MAX_CHARACTERS = 512;
/** yaml's own bound on alias uses (a "billion laughs" is refused before it is expanded). */
export const CONFIG_MAX_ALIAS_COUNT = 100;

/** A file too large to read at all: refused before parsing (413). */
export class ConfigLimitError extends Error {
  readonly status = 413;
  constructor(readonly file: string) {
    super(`${file} is over ${CONFIG_FILE_LIMIT_BYTES / 1024 / 1024} MiB, the limit of a config file`);
    this.name = 'ConfigLimitError';
  }
}

const YAML_OPTIONS = { uniqueKeys: false, schema: 'core', merge: false, resolveKnownTags: false, version: '1.2' } as const;

function pathProblem(path: string): string | null {
  const parts = path.split('/');
  const fine =
    path.length <= CONFIG_PATH_MAX_CHARACTERS &&
    !path.includes('\\') &&
    !/[\u0000-\u001f\u007f]/.test(path) &&
    parts.every((part) => part !== '' && part !== '..');
  return fine ? null : `a file's path must be relative, /-separated, without empty or .. parts, at most ${CONFIG_PATH_MAX_CHARACTERS} characters`;
}

/** A document with nothing in it (`---` twice, or comments only): skipped. */
const isEmpty = (doc: Document.Parsed) => doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null && doc.contents.source === '');

interface ReadDocument {
  document: ConfigDocument | null;
  problems: ConfigProblem[];
}

/** One YAML document of a file: a ConfigDocument, or every problem it has. */
function readDocument(doc: Document.Parsed, file: string, lines: LineCounter): ReadDocument {
  const where = (offset: number): FilePosition => {
    const { line, col } = lines.linePos(offset);
    return { file, line, column: col };
  };
  const contents = doc.contents as Node;
  const shape = checkShape(contents);
  const problemOf = ({ offset, message }: NodeProblem): ConfigProblem => ({ ...where(offset), ...shape.label, message });
  // yaml's warnings are what it lets pass (an unknown tag read as a string): checkNodes refuses those itself.
  if (doc.errors.length > 0) return { document: null, problems: doc.errors.map((e) => problemOf({ offset: e.pos[0], message: e.message })) };

  const nodes = checkNodes(contents, (offset) => lines.linePos(offset).line);
  const found = [...nodes.problems, ...shape.problems].sort((a, b) => a.offset - b.offset);
  if (found.length > 0 || !shape.kind || shape.name === null || !shape.spec) return { document: null, problems: found.map(problemOf) };

  let value: { spec: Record<string, unknown> };
  try {
    value = doc.toJS({ maxAliasCount: CONFIG_MAX_ALIAS_COUNT }) as typeof value;
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    // yaml counts alias uses as it expands them and stops at the bound: a bomb ends here, unexpanded.
    const message = `aliases are used more than yaml's bound of ${CONFIG_MAX_ALIAS_COUNT} allows (${(error as Error).message}): refused as an alias bomb`;
    return { document: null, problems: [problemOf({ offset: nodes.firstAlias?.range?.[0] ?? 0, message })] };
  }
  const spec = shape.spec;
  return {
    document: {
      kind: shape.kind,
      name: shape.name,
      spec: value.spec,
      file,
      at: where(shape.kindKey?.range?.[0] ?? 0),
      positionOf: (path) => where(specOffsetOf(spec, nodes.sourceOf, path)),
    },
    problems: [],
  };
}

/**
 * Every document of the files (in their order) and every problem: YAML syntax, duplicate keys,
 * tags, alias bombs, the shape of each document, and two documents of one kind and name.
 * @throws ConfigLimitError for a file over CONFIG_FILE_LIMIT_BYTES, before any file is parsed.
 */
export function parseConfigFiles(files: readonly ConfigFile[]): ParsedFiles {
  for (const file of files) if (Buffer.byteLength(file.content, 'utf8') > CONFIG_FILE_LIMIT_BYTES) throw new ConfigLimitError(file.path);
  const documents: ConfigDocument[] = [];
  const problems: ConfigProblem[] = [];
  const firstAt = new Map<string, FilePosition>();
  const paths = new Set<string>();
  let count = 0;
  for (const file of files) {
    const badPath = pathProblem(file.path) ?? (paths.has(file.path) ? 'this file is given twice' : null);
    if (badPath) {
      problems.push({ file: file.path.slice(0, CONFIG_PATH_MAX_CHARACTERS), line: 1, column: 1, kind: null, name: null, message: badPath });
      continue;
    }
    paths.add(file.path);
    const lines = new LineCounter();
    const at = (offset: number, message: string): ConfigProblem => ({ file: file.path, line: lines.linePos(offset).line, column: lines.linePos(offset).col, kind: null, name: null, message });
    for (const doc of yamlDocuments(file.content, lines, YAML_OPTIONS)) {
      if ('tooDeepAt' in doc) {
        problems.push(at(doc.tooDeepAt, `[ and { nested deeper than ${CONFIG_FLOW_DEPTH_LIMIT} levels: the rest of the file is not read`));
        break;
      }
      if (isEmpty(doc) && doc.errors.length === 0) continue;
      count += 1;
      if (count > CONFIG_DOCUMENT_LIMIT) {
        problems.push(at(doc.contents?.range[0] ?? doc.range[0], `more than ${CONFIG_DOCUMENT_LIMIT} documents in all (at most ${CONFIG_DOCUMENT_LIMIT})`));
        return { documents, problems };
      }
      const read = readDocument(doc, file.path, lines);
      problems.push(...read.problems);
      if (!read.document) continue;
      const key = `${read.document.kind}\u0000${read.document.name}`;
      const first = firstAt.get(key);
      if (first) {
        const second = read.document;
        const message = `${second.kind} ${JSON.stringify(second.name)} is defined twice (first at ${first.file}:${first.line}:${first.column})`;
        problems.push({ ...second.at, kind: second.kind, name: second.name, message });
      } else {
        firstAt.set(key, read.document.at);
        documents.push(read.document);
      }
    }
  }
  return { documents, problems };
}

export { formatProblem, specPathText } from './spec-positions';
export { CONFIG_FLOW_DEPTH_LIMIT } from './yaml-stream';
export { secretReferences, type SecretReference } from './secret-references';
export { formatConfigFiles, CONFIG_EXPORT_FILES, type ExportedObject } from './export-files';
