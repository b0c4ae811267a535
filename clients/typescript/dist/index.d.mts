/**
 * The ES module entry (the `import` condition of package.json's `exports`): the CommonJS
 * build's exports, re-exported, so that `import` and `require` load one copy of the client
 * and its error classes (`instanceof` holds whichever way a module got them).
 */
export * from "./index.js";
