'use strict';
const path = require('node:path');

/**
 * A jest reporter that ends the run with its slowest test files and their times, and the run's own
 * wall time: where the suite's minutes go (docs/development.md says why the slowest take what they take).
 * `SLOWEST_FILES` sets how many (10 unless given).
 */
class SlowestFilesReporter {
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.count = Number(process.env.SLOWEST_FILES ?? options.count ?? 10);
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .filter((file) => file.perfStats && file.perfStats.end > 0)
      .map((file) => ({ file: path.relative(this.rootDir, file.testFilePath), seconds: (file.perfStats.end - file.perfStats.start) / 1000, tests: file.testResults.length }))
      .sort((a, b) => b.seconds - a.seconds);
    if (files.length === 0) return;
    const wall = (Date.now() - results.startTime) / 1000;
    const total = files.reduce((sum, f) => sum + f.seconds, 0);
    const lines = [`\nSlowest test files (${files.length} files, ${total.toFixed(0)} s of file time in ${wall.toFixed(0)} s of wall time):`];
    for (const f of files.slice(0, this.count)) lines.push(`  ${f.seconds.toFixed(1).padStart(7)} s  ${f.file} (${f.tests} tests)`);
    process.stderr.write(`${lines.join('\n')}\n`);
  }
}

module.exports = SlowestFilesReporter;
