import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A temporary folder the test sshd's login (another user when tests run as root) may read and write. */
export function sharedFolder(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o777);
  return dir;
}

/** Every entry of a directory tree with its type and content hash (a link by its target): equal digests, equal trees. */
export function treeDigest(root: string): Record<string, string> {
  const digest: Record<string, string> = {};
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(root, relative)).sort()) {
      const entry = path.join(relative, name);
      const stat = lstatSync(path.join(root, entry));
      if (stat.isSymbolicLink()) digest[entry] = `link ${readlinkSync(path.join(root, entry))}`;
      else if (stat.isDirectory()) {
        digest[entry] = 'dir';
        walk(entry);
      } else digest[entry] = `file ${createHash('sha256').update(readFileSync(path.join(root, entry))).digest('hex')}`;
    }
  };
  walk('');
  return digest;
}
