import { mkdtempSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { loadMasterKey, parseMasterKey, SecretBox } from '../../src/domain/secrets/secret-box';

describe('secrets at rest', () => {
  const box = new SecretBox(randomBytes(32));

  test('round-trips, with a fresh IV each time', () => {
    const a = box.encrypt('-----BEGIN KEY-----', 'server:1');
    expect(a).not.toContain('BEGIN');
    expect(box.encrypt('-----BEGIN KEY-----', 'server:1')).not.toBe(a);
    expect(box.decrypt(a, 'server:1')).toBe('-----BEGIN KEY-----');
  });

  test('a ciphertext moved to another record, tampered with, or under another key does not decrypt', () => {
    const sealed = box.encrypt('secret', 'server:1');
    expect(() => box.decrypt(sealed, 'server:2')).toThrow();
    const [v, iv, tag, body] = sealed.split(':');
    const flipped = Buffer.from(body!, 'base64');
    flipped.writeUInt8(flipped.readUInt8(0) ^ 1, 0);
    expect(() => box.decrypt([v, iv, tag, flipped.toString('base64')].join(':'), 'server:1')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).decrypt(sealed, 'server:1')).toThrow();
  });

  test('the master key comes as hex or base64 of 32 bytes, else a clear error', () => {
    const key = randomBytes(32);
    expect(parseMasterKey(key.toString('hex')).equals(key)).toBe(true);
    expect(parseMasterKey(key.toString('base64')).equals(key)).toBe(true);
    expect(() => parseMasterKey('short')).toThrow(/BOSUN_SECRET_KEY must be 32 bytes/);
  });

  test('without BOSUN_SECRET_KEY a key file is generated once, mode 0600', () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'bosun-key-'));
    const first = loadMasterKey(undefined, home);
    expect(first.source).toBe(path.join(home, 'secret.key'));
    expect(statSync(first.source).mode & 0o777).toBe(0o600);
    expect(loadMasterKey(undefined, home).key.equals(first.key)).toBe(true);
  });
});
