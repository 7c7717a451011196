// The console runs in a browser: its modules see the DOM's types. Here rather than in the root tsconfig's "lib", so the
// root program that also checks the console still has them while tsconfig.build.json (the server code only) does not.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
