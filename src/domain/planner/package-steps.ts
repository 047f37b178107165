import { packageCommand } from './os-family';
import { shellQuote as q } from '../shell';
import type { StepBuilder } from './intent';

/* The steps of the intents about packages, in the server's OS family's own tool; m[1] is the package where one is named. */

/** Words that name no package: "remove everything in /tmp" is not `apt remove everything`. */
const NOT_A_PACKAGE = new Set(['everything', 'all', 'files', 'file', 'logs', 'log', 'directory', 'folder', 'contents', 'the', 'it', 'them', 'data']);

export const packageInstalled: StepBuilder = (m, server) => ({ title: `Is ${m[1]} installed`, command: packageCommand(server, 'installed', q(m[1]!.toLowerCase())) });

export const upgradable: StepBuilder = (_m, server) => ({ title: 'Pending package updates', command: packageCommand(server, 'upgradable') });

export const updatePackages: StepBuilder = (_m, server) => ({ title: 'Update all packages', command: packageCommand(server, 'upgrade') });

export const installPackage: StepBuilder = (m, server) => ({ title: `Install ${m[1]!.toLowerCase()}`, command: packageCommand(server, 'install', q(m[1]!.toLowerCase())) });

export const removePackage: StepBuilder = (m, server) =>
  NOT_A_PACKAGE.has(m[1]!.toLowerCase()) ? null : { title: `Remove ${m[1]!.toLowerCase()}`, command: packageCommand(server, 'remove', q(m[1]!.toLowerCase())) };
