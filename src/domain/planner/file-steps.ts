import { privileged } from './os-family';
import { shellQuote as q } from '../shell';
import { count, pathOf, wanted } from './clause';
import type { StepBuilder } from './intent';

/* The steps of the intents about files and directories; each reads the groups its pattern in intents.ts captures. */

/** delete_files: m[1] what of a directory is deleted ("everything in"), m[2] the path. */
export const deleteFiles: StepBuilder = (m, server, memory, clause) => {
  const path = pathOf(m[2], memory)!;
  const contents = (!!m[1] && !/directory|folder/i.test(m[1])) || /^\s*(?:wipe|empty|clear|purge)\b/i.test(clause.replace(/^(?:please\s+)?/i, ''));
  return contents
    ? { title: `Delete everything in ${path}`, command: privileged(server, `find ${q(path)} -mindepth 1 -delete`) }
    : { title: `Delete ${path}`, command: privileged(server, `rm -rf -- ${q(path)}`) };
};

/** tail_file: m[1] or m[2] how many lines, m[3] the path. */
export const tailFile: StepBuilder = (m, _s, memory) => {
  const path = pathOf(m[3], memory)!;
  const lines = count(m[1] ?? m[2], 100);
  return { title: `Last ${lines} lines of ${path}`, command: `tail -n ${lines} -- ${q(path)}` };
};

/** grep_file: m[1], m[2] or m[3] the word (double-, single- or unquoted), m[4] the path. */
export const grepFile: StepBuilder = (m, _s, memory, clause) => {
  const pattern = m[1] ?? m[2] ?? m[3]!;
  const path = pathOf(m[4], memory)!;
  const lines = wanted(clause, 200, 10_000);
  return { title: `Search ${path} for "${pattern}" (the last ${lines} matching lines)`, command: `grep -n -i -e ${q(pattern)} -- ${q(path)} | tail -n ${lines}` };
};

/** largest_files: m[1] the directory, when said. */
export const largestFiles: StepBuilder = (m, _s, memory, clause) => {
  const path = pathOf(m[1], memory) ?? '/';
  const n = wanted(clause, 20, 1000);
  return { title: `${n} largest files and directories under ${path}`, command: `du -ahx -- ${q(path)} 2>/dev/null | sort -rh | head -n ${n}` };
};

/** dir_size: m[1] the directory. */
export const dirSize: StepBuilder = (m, _s, memory) => {
  const path = pathOf(m[1], memory)!;
  return { title: `Size of ${path}`, command: `du -sh -- ${q(path)}` };
};

/** free_space_in: m[1] the directory. */
export const freeSpaceIn: StepBuilder = (m, _s, memory) => {
  const path = pathOf(m[1], memory)!;
  return { title: `Free space in ${path}`, command: `df -h -- ${q(path)}` };
};

/** show_file: m[1] the file. */
export const showFile: StepBuilder = (m, _s, memory) => {
  const path = pathOf(m[1], memory)!;
  return { title: `Contents of ${path}`, command: `head -c 65536 -- ${q(path)}` };
};

/** list_dir: m[1] the directory. */
export const listDir: StepBuilder = (m, _s, memory) => {
  const path = pathOf(m[1], memory)!;
  return { title: `Files in ${path}`, command: `ls -la -- ${q(path)}` };
};
