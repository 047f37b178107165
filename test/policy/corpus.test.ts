import { readFileSync } from 'node:fs';
import path from 'node:path';
import { assessCommand, DEFAULT_POLICY, judgeStep } from '../../src/domain/planner/policy';
import { benignCorpus, bypassCorpus, meets } from '../support/policy-corpus';

describe('the command policy against its corpora', () => {
  it.each(bypassCorpus.map((c) => [c.technique, c.command, c.expect, c] as const))('sees through %s: %j is at least %s', (_technique, command, least, c) => {
    const { risk, reasons } = assessCommand(command);
    expect(meets(c, risk)).toBe(true);
    if (least === 'destructive') {
      expect(reasons.length).toBeGreaterThan(0);
      expect(judgeStep({ command, risk: 'read' }, DEFAULT_POLICY)).toMatchObject({ allowed: false });
    }
  });

  it.each(benignCorpus.map((c) => [c.technique, c.command] as const))('leaves a read alone (%s): %j', (_technique, command) => {
    expect(assessCommand(command)).toEqual({ risk: 'read', reasons: [] });
    expect(judgeStep({ command, risk: 'read' }, DEFAULT_POLICY)).toEqual({ allowed: true, risk: 'read', needsApproval: false });
  });

  it('is as large as the issue asks, and the figures in the docs are these', () => {
    const falseNegatives = bypassCorpus.filter((c) => !meets(c, assessCommand(c.command).risk)).length;
    const falsePositives = benignCorpus.filter((c) => !meets(c, assessCommand(c.command).risk)).length;
    console.log(`command policy corpus: ${bypassCorpus.length} bypass attempts (${falseNegatives} missed), ${benignCorpus.length} benign commands (${falsePositives} flagged)`);
    expect(bypassCorpus.length).toBeGreaterThanOrEqual(150);
    expect(benignCorpus.length).toBeGreaterThanOrEqual(150);
    expect(new Set(bypassCorpus.map((c) => c.command)).size).toBe(bypassCorpus.length);
    expect(new Set(benignCorpus.map((c) => c.command)).size).toBe(benignCorpus.length);
    for (const page of ['command-policy.md', 'agents.md']) {
      const docs = readFileSync(path.join(__dirname, '..', '..', 'docs', page), 'utf8');
      expect(docs).toContain(`| Bypass attempts | ${bypassCorpus.length} | ${falseNegatives} false negatives |`);
      expect(docs).toContain(`| Benign reads | ${benignCorpus.length} | ${falsePositives} false positives |`);
    }
  });
});
