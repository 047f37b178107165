import { readFileSync } from 'node:fs';
import path from 'node:path';
import { riskRank, type Risk } from '../../src/domain/planner/types';

/** One corpus entry: a command line, the least risk it must be given, and the technique it tries. */
export interface CorpusCase {
  command: string;
  expect: Risk;
  technique: string;
}

const load = (name: string): CorpusCase[] => JSON.parse(readFileSync(path.join(__dirname, '..', 'policy', 'corpus', `${name}.json`), 'utf8'));

/** Attempts to hide a change or a destruction: each must be rated at least its `expect`. */
export const bypassCorpus = load('bypass');
/** Everyday reads: each must stay exactly `read`. */
export const benignCorpus = load('benign');

/** Whether a rating meets the case: at least as high for a bypass attempt, exactly `read` for a benign command. */
export const meets = (c: CorpusCase, risk: Risk) => (c.expect === 'read' ? risk === 'read' : riskRank(risk) >= riskRank(c.expect));
