/**
 * jest runs the suites in its own process (in band on 2 cores), so a test that leaves `process.exitCode` set makes that
 * process end 1 after every suite passed, with nothing printed: a CLI run in process, or jest itself when a file's
 * leftover work (a timer that outlived its test) requires a module after the file ended. The file whose end finds it
 * set fails here instead, by name: that file, or a leftover of the one before it (jest prints which file required).
 */
afterAll(() => {
  const code = process.exitCode;
  if (code === undefined || code === 0) return;
  process.exitCode = 0;
  throw new Error(
    `process.exitCode was ${code} when this file ended (set by it, or by work the file before it left running): the whole jest run would fail`,
  );
});
