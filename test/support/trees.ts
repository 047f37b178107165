import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A temporary folder the test sshd's login (another user when tests run as root) may read and write. */
export function sharedFolder(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o777);
  return dir;
}

/** Every entry of a directory tree with its type, mode and content hash (a link by its target): equal digests, equal trees. */
export function treeDigest(root: string): Record<string, string> {
  const digest: Record<string, string> = {};
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(root, relative)).sort()) {
      const entry = path.join(relative, name);
      const stat = lstatSync(path.join(root, entry));
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isSymbolicLink()) digest[entry] = `link ${readlinkSync(path.join(root, entry))}`;
      else if (stat.isDirectory()) {
        digest[entry] = `dir ${mode}`;
        walk(entry);
      } else digest[entry] = `file ${mode} ${createHash('sha256').update(readFileSync(path.join(root, entry))).digest('hex')}`;
    }
  };
  walk('');
  return digest;
}

const MiB = 1024 * 1024;

/** 200 MiB of incompressible data in 310 files: one large, nine medium, 300 small; a link and an empty folder. */
export function makeMigrationTree(root: string) {
  const write = (file: string, bytes: number) => {
    mkdirSync(path.dirname(file), { recursive: true });
    const chunks = [];
    for (let left = bytes; left > 0; left -= 16 * MiB) chunks.push(randomBytes(Math.min(16 * MiB, left)));
    writeFileSync(file, Buffer.concat(chunks));
  };
  write(path.join(root, 'db/base.bin'), 100 * MiB);
  for (let i = 0; i < 9; i++) write(path.join(root, `media/video-${i}.bin`), 10 * MiB);
  for (let i = 0; i < 300; i++) write(path.join(root, `static/${i % 10}/asset-${i}.txt`), 35 * 1024);
  mkdirSync(path.join(root, 'cache'));
  symlinkSync('db/base.bin', path.join(root, 'current'));
}
