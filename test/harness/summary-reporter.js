// Prints the plain closing line CI tools read in any language: "tests: N passed, N failed, N skipped".
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + (results.numRuntimeErrorTestSuites || 0);
    process.stdout.write(`\ntests: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
module.exports = SummaryReporter;
