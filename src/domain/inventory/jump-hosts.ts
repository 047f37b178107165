import { shellWords } from './shell-words';

/*
 * Jump hosts as OpenSSH names them: `ProxyJump a,b` / `-J a,b`, each hop `[user@]host[:port]`.
 * Bosun's hops are servers, so only each hop's host is kept: the name it is found by.
 */

/** `user@bastion:2222,b2` → ['bastion', 'b2']. */
export function hopNames(proxyJump: string): string[] {
  if (proxyJump.trim().toLowerCase() === 'none') return [];
  return proxyJump
    .split(',')
    .map((hop) => hop.trim().replace(/^ssh:\/\//, '').replace(/^[^@]*@/, ''))
    .map((hop) => (hop.startsWith('[') ? hop.slice(1, hop.indexOf(']')) : hop.replace(/:\d+$/, '')))
    .filter(Boolean);
}

/** The hops in ssh arguments (`ansible_ssh_common_args`): `-J a,b`, `-Ja`, `-o ProxyJump=a`, `-o "ProxyJump a"`. */
export function hopsInSshArgs(args: string): string[] {
  const words = shellWords(args);
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-J' && words[i + 1]) return hopNames(words[i + 1]!);
    if (word.startsWith('-J') && word.length > 2) return hopNames(word.slice(2));
    const option = word === '-o' ? words[i + 1] : word.startsWith('-o') ? word.slice(2) : undefined;
    const proxyJump = option ? /^ProxyJump\s*[=\s]\s*(.+)$/i.exec(option) : null;
    if (proxyJump) return hopNames(proxyJump[1]!);
  }
  return [];
}
