import { CappedOutput, Redactor } from '../../src/domain/execution/output';

describe('redacting streamed output', () => {
  test('a secret split across chunks is caught; other text streams at once', () => {
    const redactor = new Redactor(['hunter2-secret']);
    expect(redactor.push('begun\n')).toBe('begun\n');
    expect(redactor.push('token=hunt')).toBe('token=');
    expect(redactor.push('er2-secr')).toBe('');
    expect(redactor.push('et and more\n')).toBe('[redacted] and more\n');
    expect(redactor.push('almost hunter2-se')).toBe('almost ');
    expect(redactor.flush()).toBe('hunter2-se');
  });

  test('with several secrets, the longest possible start of any of them is held back', () => {
    const redactor = new Redactor(['abcdefgh', 'xyzab']);
    expect(redactor.push('hello xyza')).toBe('hello ');
    expect(redactor.push('b rest')).toBe('[redacted] rest');
  });

  test('the longest secret wins when one contains another; tiny values are not treated as secrets', () => {
    const redactor = new Redactor(['abcd', 'abcdefgh', 'xy']);
    expect(redactor.push('abcdefgh abcd xy\n')).toBe('[redacted] [redacted] xy\n');
  });
});

describe('capped output', () => {
  test('keeps head and tail, counts what it drops', () => {
    const out = new CappedOutput(4, 6);
    out.append('0123456789');
    out.append('abcdef');
    expect(out.toString()).toBe('0123\n… [6 bytes of output omitted] …\nabcdef');
    expect(out.bytes).toBe(16);
  });

  test('caps bytes, not characters, and never splits a character', () => {
    const out = new CappedOutput(5, 7);
    out.append('ééé'); // 6 bytes: the head takes two characters (4 bytes)
    out.append('€€€€'); // 12 bytes
    const text = out.toString();
    expect(text.startsWith('éé\n… [')).toBe(true);
    expect(text.endsWith('€€')).toBe(true);
    expect(Buffer.byteLength(text.split('…\n')[1]!)).toBeLessThanOrEqual(7);
    expect(text).not.toContain('\ufffd');
  });
});
