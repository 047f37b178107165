'use strict';
const { writeFileSync } = require('node:fs');
const path = require('node:path');

/** Says the slowest of `files` ({ file, seconds, tests }) and their times, with the sum of file times beside the wall time. */
function printSlowest(files, wallSeconds, count = 10) {
  if (files.length === 0) return;
  const sorted = [...files].sort((a, b) => b.seconds - a.seconds);
  const total = sorted.reduce((sum, f) => sum + f.seconds, 0);
  const lines = [`\nSlowest test files (${sorted.length} files, ${total.toFixed(0)} s of file time in ${wallSeconds.toFixed(0)} s of wall time):`];
  for (const f of sorted.slice(0, count)) lines.push(`  ${f.seconds.toFixed(1).padStart(7)} s  ${f.file} (${f.tests} tests)`);
  process.stderr.write(`${lines.join('\n')}\n`);
}

/**
 * A jest reporter that ends the run with its slowest test files and their times, and the run's own
 * wall time: where the suite's minutes go (docs/development.md says why the slowest take what they take).
 * `SLOWEST_FILES` sets how many (10 unless given). With `SLOWEST_FILES_OUT` (set by `npm test`, whose
 * two jest lanes are said together), the times are written to that file instead.
 */
class SlowestFilesReporter {
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.count = Number(process.env.SLOWEST_FILES ?? options.count ?? 10);
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .filter((file) => file.perfStats && file.perfStats.end > 0)
      .map((file) => ({ file: path.relative(this.rootDir, file.testFilePath), seconds: (file.perfStats.end - file.perfStats.start) / 1000, tests: file.testResults.length }));
    if (process.env.SLOWEST_FILES_OUT) writeFileSync(process.env.SLOWEST_FILES_OUT, JSON.stringify(files));
    else printSlowest(files, (Date.now() - results.startTime) / 1000, this.count);
  }
}

module.exports = SlowestFilesReporter;
module.exports.printSlowest = printSlowest;
