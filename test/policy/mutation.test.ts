import { classify, RULES } from '../../src/domain/planner/command-rules';
import { benignCorpus, bypassCorpus, meets } from '../support/policy-corpus';

const corpus = [...bypassCorpus, ...benignCorpus];

describe('every classification rule is pinned by the corpora', () => {
  it('passes every case with all the rules', () => {
    expect(corpus.filter((c) => !meets(c, classify(c.command, RULES).risk)).map((c) => c.command)).toEqual([]);
  });

  it.each(RULES.map((r) => [r.name] as const))('without the rule %s, some corpus case fails', (name) => {
    const rules = RULES.filter((r) => r.name !== name);
    expect(rules).toHaveLength(RULES.length - 1);
    const failing = corpus.filter((c) => !meets(c, classify(c.command, rules).risk));
    expect(failing.length).toBeGreaterThan(0);
  });
});
