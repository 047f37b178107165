import type { ClientSession } from 'mongoose';
import type { z } from 'zod';
import type { Principal } from '../tokens/service';

/*
 * Definitions kept in Git (issue 38): what the files, the plan, the apply and each kind's adapter
 * share. Files hold YAML documents `{ kind, name, spec }`; `spec` is the API's create body with
 * references by name. Each kind has one adapter (src/domain/config/kinds/) that reads the
 * organization's objects as specs, checks a file's spec, and writes it inside the apply's transaction.
 */

export const CONFIG_KINDS = ['Deployment', 'Pipeline', 'Schedule', 'Freeze', 'Team', 'ServiceAccount', 'RoleBinding', 'NotificationChannel', 'Policy'] as const;
export type ConfigKind = (typeof CONFIG_KINDS)[number];

/** What a spec may name besides the config kinds: servers by title, people by email (else name). */
export type ReferenceKind = ConfigKind | 'Server' | 'Person';

/** A file as a plan or apply receives it: its path in the repository, and its text. */
export interface ConfigFile {
  path: string;
  content: string;
}

/** A place in the files: the file's path, 1-based line and column. */
export interface FilePosition {
  file: string;
  line: number;
  column: number;
}

/** A path inside a document's spec, as zod reports it (`['steps', 2, 'timeout_seconds']`). */
export type SpecPath = ReadonlyArray<string | number>;

/**
 * One problem of a plan, where it is: rendered `file:line:column: message`. A message about a part of
 * a spec begins with that part's path (`steps[2].timeout_seconds must be at most 86400`).
 */
export interface ConfigProblem extends FilePosition {
  kind: string | null;
  name: string | null;
  message: string;
}

/** A document of the files, parsed, with where each part of its spec is. */
export interface ConfigDocument {
  kind: ConfigKind;
  name: string;
  /** Plain JSON as the YAML gave it (`${secret:NAME}` references kept as written). */
  spec: Record<string, unknown>;
  file: string;
  /** Where the document begins (its `kind:`). */
  at: FilePosition;
  /** The node at `path` in the spec; its nearest ancestor that exists when it does not; `spec:` itself for []. */
  positionOf(path: SpecPath): FilePosition;
}

/** Every document of the files, and every problem found reading them (each document with a problem left out). */
export interface ParsedFiles {
  documents: ConfigDocument[];
  problems: ConfigProblem[];
}

/** A problem of one spec, at a path inside it (the engine gives it its file, line and column). */
export interface SpecProblem {
  path: SpecPath;
  message: string;
}

/** Who applied an object from Git, and how it looked then: on every object a source applied. */
export interface ManagedBy {
  source: string;
  revision: string | null;
  path: string;
  /** The file on the source's web host at that revision (`<web_url>/blob/<revision>/<path>`), when known. */
  url: string | null;
  applied_at: Date;
  /** sha256 of the canonical spec as applied: another value now is drift. */
  spec_hash: string;
  /** Set by a change through another path with `force: true` (it shows as drifted until the next apply). */
  forced_at: Date | null;
  forced_by: string | null;
}

/**
 * Names and ids of everything a spec may reference: the organization's objects, and the documents
 * of the files being planned (with the ids they will have once applied).
 */
export interface NameIndex {
  idOf(kind: ReferenceKind, name: string): string | null;
  nameOf(kind: ReferenceKind, id: string): string | null;
}

/** An object of the organization as files would write it. */
export interface CurrentObject {
  id: string;
  name: string;
  /** Canonical: defaults filled in, references by name, keys in the adapter's stable order. */
  spec: Record<string, unknown>;
  managed_by: ManagedBy | null;
}

/** What a plan checks a document's spec against. */
export interface CheckContext {
  organizationId: string;
  names: NameIndex;
  /** The organization's secret names: a `${secret:NAME}` of none is a problem. */
  secrets: ReadonlySet<string>;
  /** The object of this name the organization has now (null: the document creates it). */
  current: CurrentObject | null;
}

/** A document's spec checked: canonical (compared with CurrentObject.spec), or its problems. */
export type CheckedSpec = { spec: Record<string, unknown>; problems: [] } | { spec: null; problems: SpecProblem[] };

/** What an adapter writes with, inside the apply's one transaction. */
export interface ApplyContext {
  organizationId: string;
  session: ClientSession;
  names: NameIndex;
  principal: Principal;
  now: Date;
}

/** One object the apply writes: created (`existing` false, with its planned id) or replaced. */
export interface ObjectWrite {
  id: string;
  name: string;
  spec: Record<string, unknown>;
  existing: boolean;
  managed_by: ManagedBy;
}

export interface KindAdapter {
  kind: ConfigKind;
  /** The spec as files write it (names for references): `bosun config schema` is made of these. */
  fileSchema: z.ZodType;
  /** The rule a document's `name` must pass: the API's create body's `name` (a service account's is a token name). */
  nameSchema: z.ZodType<string>;
  /** The organization's objects of this kind. */
  current(organizationId: string, names: NameIndex): Promise<CurrentObject[]>;
  /** A file's spec: schema, references, the same rules as the API's create; canonical when it passes. */
  check(spec: Record<string, unknown>, context: CheckContext): Promise<CheckedSpec>;
  /** Creates or replaces the object through the session only (all of an apply commits, or none). */
  write(context: ApplyContext, object: ObjectWrite): Promise<void>;
  /** Deletes the object (prune) through the session only. */
  remove(context: ApplyContext, id: string): Promise<void>;
  /** Why the object may not be pruned now (a run queued or going, a pipeline that stays uses it), or null. */
  pruneBlocker(organizationId: string, id: string, staying: NameIndex): Promise<string | null>;
  /**
   * After the transaction committed: what lives outside MongoDB follows (Temporal Schedules, caches,
   * frozen runs told). Lost by a crash, the worker's reconcile repairs it: never required for correctness.
   */
  afterApply?(organizationId: string, changed: { written: string[]; removed: string[] }): Promise<void>;
}
