/** Quotes a value for a POSIX shell: it reaches the command as one word, whatever it contains. */
export const shellQuote = (value: string) => (/^[A-Za-z0-9@%+=:,./_-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);
