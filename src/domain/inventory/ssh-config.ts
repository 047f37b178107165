import SSHConfig, { LineType, type Line, type Section } from 'ssh-config';
import { hopNames } from './jump-hosts';
import { InventoryParseError, type InventoryHost, type ParsedInventory } from './inventory';

/*
 * An OpenSSH client config (`~/.ssh/config`), read by the `ssh-config` package: every `Host` name
 * without wildcards is a host, with what OpenSSH would compute for it (first value wins, so `Host *`
 * defaults apply where nothing earlier set them). The content is a string sent over HTTP, so an
 * `Include` cannot be read (it names the caller's files): it is skipped with a warning; so is a
 * `Match` block (its conditions are about the caller's machine, and `exec` would run a command).
 */

const WILDCARD = /[*?!]/;

const valueWords = (line: Line): string[] =>
  line.type !== LineType.DIRECTIVE ? [] : typeof line.value === 'string' ? [line.value] : line.value.map((v) => v.val);

/** The 1-based line of every directive named `param` (Host, Match, Include), in file order. */
function linesOf(content: string, param: RegExp): number[] {
  return content.split(/\r?\n/).flatMap((text, i) => (param.test(text) ? [i + 1] : []));
}

/** The first line whose prefix the parser refuses: where a parse error is. */
function failingLine(lines: string[]): number {
  let [good, bad] = [0, lines.length];
  while (bad - good > 1) {
    const mid = Math.floor((good + bad) / 2);
    try {
      SSHConfig.parse(lines.slice(0, mid).join('\n'));
      good = mid;
    } catch {
      bad = mid;
    }
  }
  return bad;
}

function parse(content: string): SSHConfig {
  try {
    return SSHConfig.parse(content);
  } catch (error) {
    throw new InventoryParseError(failingLine(content.split(/\r?\n/)), (error as Error).message);
  }
}

export function parseSshConfig(content: string): ParsedInventory {
  const config = parse(content);
  const warnings: string[] = [
    ...linesOf(content, /^\s*Include[\s=]/i).map((line) => [line, `line ${line}: Include is not followed (an import reads only the content sent): skipped`] as const),
    ...linesOf(content, /^\s*Match[\s=]/i).map((line) => [line, `line ${line}: Match block ignored (only Host blocks are read)`] as const),
  ]
    .sort(([a], [b]) => a - b)
    .map(([, warning]) => warning);
  const sectionLines = linesOf(content, /^\s*(Host|Match)[\s=]/i);
  // Only Host blocks (and top-level directives) count: Match blocks and Includes are dropped before computing.
  const sections = config.filter((line): line is Section => line.type === LineType.DIRECTIVE && 'config' in line);
  const hostLines = new Map(sections.map((section, i) => [section, sectionLines[i] ?? 1]));
  const readable = config.filter((line) => !(line.type === LineType.DIRECTIVE && /^(match|include)$/i.test(line.param))) as SSHConfig;
  for (const section of sections) {
    const kept = section.config.filter((line) => !(line.type === LineType.DIRECTIVE && /^include$/i.test(line.param)));
    section.config.splice(0, section.config.length, ...kept);
  }

  const seen = new Set<string>();
  const hosts: InventoryHost[] = [];
  for (const section of sections) {
    if (!/^host$/i.test(section.param)) continue;
    const line = hostLines.get(section)!;
    for (const name of valueWords(section)) {
      if (WILDCARD.test(name) || seen.has(name)) continue;
      seen.add(name);
      const computed = readable.compute({ Host: name }, { ignoreCase: true, matchExec: false });
      const one = (key: string) => {
        const value = computed[key];
        return Array.isArray(value) ? value[0] : value;
      };
      const portText = one('port');
      const port = portText === undefined ? undefined : Number(portText);
      if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) throw new InventoryParseError(line, `Port of ${name} is "${portText}", not a port (1 to 65535)`);
      if (one('proxycommand')) warnings.push(`line ${line}: ProxyCommand of ${name} is not understood (use ProxyJump): ignored`);
      const user = one('user');
      hosts.push({ name, host: one('hostname')?.replace(/%h/g, name) ?? name, ...(port !== undefined ? { port } : {}), ...(user ? { username: user } : {}), groups: [], via: hopNames(one('proxyjump') ?? 'none'), line });
    }
  }
  return { hosts, warnings };
}
