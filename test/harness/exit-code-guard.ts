/**
 * jest runs the suites in its own process (in band on 2 cores), so a test that leaves `process.exitCode` set (a CLI
 * run in process, a library's failure path) makes that process end 1 after every suite passed, with nothing printed.
 * The file that left it fails here instead, by name.
 */
afterAll(() => {
  const code = process.exitCode;
  if (code === undefined || code === 0) return;
  process.exitCode = 0;
  throw new Error(`this test file left process.exitCode = ${code}, which would fail the whole jest run`);
});
