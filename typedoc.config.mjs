// `npm run docs`: the API reference, built by TypeDoc from the doc comments into build/docs/ (gitignored).
// test/docs.test.ts builds it too (into a temporary directory) and fails on any warning.
//
// TypeScript: the project compiles with TypeScript 7 (the native Go compiler), which ships no JavaScript
// compiler API; TypeDoc 0.28 is built on that API and supports TypeScript 5.0 to 6.0 only (its peer
// dependency; TS 7 support is TypeStrong/typedoc#3098, not released yet). So package.json follows
// Microsoft's side-by-side layout for TypeScript 7: `@typescript/native` is `typescript@7.0.2`, which gives
// the `tsc` command `npm run build` runs, and `typescript` is `@typescript/typescript6` (the TypeScript 6
// API, command `tsc6`), which is what `import 'typescript'` in TypeDoc gets. An alias under another name
// (`typescript-api`) would not do: TypeDoc imports `typescript`, and npm refuses typedoc next to a
// `typescript` 7 (ERESOLVE on the peer dependency) unless peer checks are turned off for the whole tree.
// This file is JavaScript rather than typedoc.json because TypeDoc's coming TS 7 release drops JSON configs.

/** @type {Partial<import('typedoc').TypeDocOptions>} */
const config = {
  name: 'softdpu',
  // The package's public exports (package.json "exports": `.` and `./dpa-dev`).
  entryPoints: ['src/index.ts', 'src/dpa/dev/index.ts'],
  tsconfig: 'tsconfig.docs.json',
  out: 'build/docs',
  readme: 'none',
  includeVersion: true,
  // What is not part of the API stays out: `@internal` members, private and protected ones.
  excludeInternal: true,
  excludePrivate: true,
  excludeProtected: true,
  // Broken links, undocumented exports and referenced-but-not-exported symbols are errors.
  validation: {
    notExported: true,
    invalidLink: true,
    invalidPath: true,
    rewrittenLink: true,
    notDocumented: true,
    unusedMergeModuleWith: true,
  },
  treatWarningsAsErrors: true,
  treatValidationWarningsAsErrors: true,
  // Every export and every method (functions bring call signatures, methods included). Properties and
  // accessors are not required: many are plain fields whose name and type say it all.
  requiredToBeDocumented: ['Enum', 'Variable', 'Function', 'Class', 'Interface', 'TypeAlias'],
  // The one unexported type a public one names: `Dpa implements DpaEventTarget`, the sync-event layer's
  // view of a DPA (its members are @internal), which lives below dpa/ and is no API of its own.
  intentionallyNotExported: ['src/sync-event/dpa-handle.ts:DpaEventTarget'],
  // The build (`tsc`, TypeScript 7) is the type check; TypeDoc's TypeScript 6 only reads the sources.
  skipErrorChecking: true,
  hideGenerator: true,
  // No "Defined in" links: TypeDoc builds them from the git remote, and a clone has no public one (CI
  // clones from a local path), which TypeDoc reports as a warning.
  disableSources: true,
};

export default config;
