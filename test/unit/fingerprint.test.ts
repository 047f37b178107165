import { FingerprintParseError, humanSize, parseFingerprint } from '../../src/domain/ssh/fingerprint';

describe('server fingerprint parsing', () => {
  const sample = [
    'PRETTY_NAME="Rocky Linux 9.3 (Blue Onyx)"\nNAME="Rocky Linux"\nVERSION_ID="9.3"\nID="rocky"',
    '5.14.0-362.el9.x86_64',
    '16',
    'MemTotal:       32563112 kB',
    '/dev/sda1       104806400  51200000  53606400  49% /',
  ].join('\n--bosun--\n');

  test('reads os-release, kernel, cores, memory and disk', () => {
    expect(parseFingerprint(sample)).toEqual({
      os: { name: 'Rocky Linux', version: '9.3', kernel: '5.14.0-362.el9.x86_64' },
      cpu_cores: 16,
      ram: '31 GiB',
      disk: '100 GiB',
    });
  });

  test('a server without os-release still reports what it has', () => {
    const out = ['', '6.1.0', '2', 'MemTotal: 1000000 kB', '/dev/root 8000000 1 1 1% /'].join('\n--bosun--\n');
    expect(parseFingerprint(out)).toMatchObject({ os: { name: 'unknown', version: 'unknown', kernel: '6.1.0' }, ram: '977 MiB', disk: '7.6 GiB' });
  });

  test('output that is not a fingerprint is refused', () => {
    expect(() => parseFingerprint('Permission denied')).toThrow(FingerprintParseError);
  });

  test.each([
    [512, '512 B'],
    [1536, '1.5 KiB'],
    [10 * 1024 ** 3, '10 GiB'],
    [7.8 * 1024 ** 3, '7.8 GiB'],
    [2 * 1024 ** 4, '2 TiB'],
  ])('humanSize(%d) = %s', (bytes, shown) => {
    expect(humanSize(bytes)).toBe(shown);
  });
});
