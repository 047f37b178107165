/**
 * The command policy's classification rules, each named so that a test can take any one away and
 * see a corpus case fail. A line is parsed (mvdan/sh), every simple command in its tree is judged
 * by every command rule, and the whole line by the line rules; the highest risk found wins.
 */

import { higherRisk, type Risk } from '../types';
import { parseShell } from '../../shell-syntax';
import { toCommand, type Classification, type Command, type CommandRule, type LineFacts, type LineRule, type Rule, type RuleResult } from './command';
import { aliases, awkProgram, dynamicCommandName, environmentHijack, storedCode, evalAndTrap, interpreterCode, sedProgram, shellCode, sourceFile } from './code';
import { accounts, criticalFileWrites, essentialPackages, databases, diskTools, firewall, killEverything, power, recursiveDelete, recursiveFunction, recursivePermissions, redirectWrites } from './damage';
import { downloadThenRun, unparseable, writeThenRun } from './lines';
import { readOnlyCommands } from './reads';
import { commandsInOptions, findActions, remoteShell, wrappers, xargs } from './wrappers';

export { isSystemDirectory, toCommand, type Classification, type Command, type CommandRule, type LineFacts, type LineRule, type Rule, type RuleResult } from './command';

/** Every rule, in no particular order: each one's findings are combined, the highest risk wins. */
export const RULES: readonly Rule[] = [
  unparseable,
  downloadThenRun,
  writeThenRun,
  dynamicCommandName,
  environmentHijack,
  storedCode,
  commandsInOptions,
  readOnlyCommands,
  wrappers,
  xargs,
  findActions,
  shellCode,
  interpreterCode,
  evalAndTrap,
  sourceFile,
  aliases,
  remoteShell,
  awkProgram,
  sedProgram,
  redirectWrites,
  recursiveDelete,
  recursivePermissions,
  diskTools,
  criticalFileWrites,
  power,
  firewall,
  accounts,
  killEverything,
  databases,
  essentialPackages,
  recursiveFunction,
];

/** How deep code inside code (`bash -c "eval 'sh -c …'"`) is followed; deeper is destructive. */
const MAX_DEPTH = 4;

/** Classifies one line with the given rules (the policy uses RULES; the mutation test leaves one out). */
export function classify(line: string, rules: readonly Rule[] = RULES, depth = 0): Classification & { commands: Command[] } {
  const parsed = parseShell(line);
  const commandRules = rules.filter((r): r is CommandRule => r.kind === 'command');
  const lineRules = rules.filter((r): r is LineRule => r.kind === 'line');
  const all: Command[] = [];
  let risk: Risk = 'read';
  const reasons: string[] = [];
  const note = (result: RuleResult) => {
    if (!result.risk) return;
    risk = higherRisk(risk, result.risk);
    if (result.risk === 'destructive' && result.reason) reasons.push(result.reason);
  };
  const visit = (cmd: Command, hops: number) => {
    all.push(cmd);
    if (hops > 16) return note({ risk: 'destructive', reason: 'wrappers nested too deep to follow' });
    let known = cmd.words.length === 0;
    for (const rule of commandRules) {
      const result = rule.apply(cmd);
      if (!result) continue;
      note(result);
      if (result.reads) known = true;
      for (const inner of result.runs ?? []) {
        known = true;
        visit(inner, hops + 1);
      }
      for (const code of result.code ?? []) {
        known = true;
        if (depth >= MAX_DEPTH) {
          note({ risk: 'destructive', reason: 'code inside code nested too deep to follow' });
          continue;
        }
        const inner = classify(code, rules, depth + 1);
        all.push(...inner.commands);
        note({ risk: inner.risk });
        reasons.push(...inner.reasons);
      }
    }
    // A command no rule recognises may change anything (but is not known to destroy).
    if (!known) note({ risk: 'change' });
  };
  if (parsed.ok) for (const cmd of parsed.commands) visit(toCommand(cmd), 0);
  const facts: LineFacts = { parseError: parsed.ok ? null : parsed.error, commands: all };
  for (const rule of lineRules) {
    const result = rule.apply(facts);
    if (!result) continue;
    note(result);
    for (const code of result.code ?? []) {
      const inner = depth >= MAX_DEPTH ? { risk: 'destructive' as Risk, reasons: ['code inside code nested too deep to follow'] } : classify(code, rules, depth + 1);
      note({ risk: inner.risk });
      reasons.push(...inner.reasons);
    }
  }
  return { risk, reasons: [...new Set(reasons)], commands: all };
}
