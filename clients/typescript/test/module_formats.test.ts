/**
 * The package's `exports` map: `require("skillrunner-client")` loads the CommonJS build and
 * `import("skillrunner-client")` the ES module entry, both with the Client and the error classes,
 * one copy shared between them; TypeScript finds each condition's types; and the ES module's
 * Client calls a real serve.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { servedTree } from "./helpers";

const HERE = path.resolve(__dirname, "..");
const TSC = path.join(HERE, "node_modules", ".bin", "tsc");

/** What a consumer script prints about the module it loaded. */
interface Loaded {
  client: string;
  keys: string[];
  hasDefault: boolean;
  sameAsRequire: boolean;
  inputInvalid: boolean;
}

// Each consumer lives outside the package and finds it in its own node_modules, as an installed
// dependency would be found.
const CONSUMER_CJS = `const pkg = require("skillrunner-client");
const again = require("skillrunner-client");
const e = new pkg.InputInvalidError("INPUT_INVALID", "bad");
console.log(JSON.stringify({ client: typeof pkg.Client, keys: Object.keys(pkg), hasDefault: "default" in pkg,
  sameAsRequire: pkg === again, inputInvalid: e instanceof pkg.SkillrunnerError && e instanceof Error }));
`;
const CONSUMER_MJS = `import { createRequire } from "node:module";
import * as pkg from "skillrunner-client";
import { Client, SkillrunnerError, InputInvalidError } from "skillrunner-client";
const required = createRequire(import.meta.url)("skillrunner-client");
const e = new InputInvalidError("INPUT_INVALID", "bad");
console.log(JSON.stringify({ client: typeof Client, keys: Object.keys(pkg), hasDefault: "default" in pkg,
  sameAsRequire: Client === required.Client && SkillrunnerError === required.SkillrunnerError,
  inputInvalid: e instanceof required.InputInvalidError && e instanceof required.SkillrunnerError }));
`;
// Type checks only (never run): a wrong option or result type fails the compile, as would a
// missing declaration file (implicit any under --strict).
const USAGE = (from: string): string => `import { Client, InputInvalidError, type InvokeResult } from "skillrunner-client";
export async function use(client: Client): Promise<number> {
  const result: InvokeResult<{ words: number }> = await client.invoke<{ words: number }>("word_stats", { text: "a" }, { timeoutMs: 5000 });
  // @ts-expect-error timeoutMs is a number
  await client.invoke("word_stats", {}, { timeoutMs: "5000" });
  const e: unknown = null;
  return e instanceof InputInvalidError ? 0 : result.output.words;
}
export const from = ${JSON.stringify(from)};
`;

function run(file: string): Loaded {
  return JSON.parse(execFileSync(process.execPath, [file], { encoding: "utf8" })) as Loaded;
}

describe("ESM and CommonJS entry points", () => {
  let consumer: string;
  let cjsKeys: string[];

  before(() => {
    consumer = fs.mkdtempSync(path.join(os.tmpdir(), "srts-consumer-"));
    fs.mkdirSync(path.join(consumer, "node_modules"));
    fs.symlinkSync(HERE, path.join(consumer, "node_modules", "skillrunner-client"), "dir");
    fs.writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true }));
    fs.writeFileSync(path.join(consumer, "consumer.cjs"), CONSUMER_CJS);
    fs.writeFileSync(path.join(consumer, "consumer.mjs"), CONSUMER_MJS);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    cjsKeys = Object.keys(require("skillrunner-client") as object).sort();
  });
  after(() => fs.rmSync(consumer, { recursive: true, force: true }));

  it("require() resolves to the CommonJS build and exposes the Client", () => {
    assert.equal(require.resolve("skillrunner-client"), path.join(HERE, "dist", "index.js"));
    const loaded = run(path.join(consumer, "consumer.cjs"));
    assert.equal(loaded.client, "function");
    assert.deepEqual(loaded.keys.sort(), cjsKeys);
    assert.ok(loaded.keys.includes("InputInvalidError") && loaded.keys.includes("SkillrunnerError"));
    assert.equal(loaded.hasDefault, false);
    assert.ok(loaded.sameAsRequire && loaded.inputInvalid);
  });

  it("import() resolves to the ES module entry, which shares the CommonJS build's classes", () => {
    const loaded = run(path.join(consumer, "consumer.mjs"));
    assert.equal(loaded.client, "function");
    // The ES module entry re-exports by name, so its namespace has no `default`, which Node gives
    // a CommonJS module loaded by import: the `import` condition was taken.
    assert.equal(loaded.hasDefault, false);
    assert.deepEqual(loaded.keys.filter((k) => k !== "__esModule").sort(), cjsKeys.filter((k) => k !== "__esModule"));
    assert.ok(loaded.sameAsRequire, "import and require give the same Client and SkillrunnerError");
    assert.ok(loaded.inputInvalid, "an error class from import is instanceof the one from require");
  });

  it("TypeScript finds the types of both conditions (node16 resolution, .mts and .cts consumers)", () => {
    fs.writeFileSync(path.join(consumer, "usage.mts"), USAGE("esm"));
    fs.writeFileSync(path.join(consumer, "usage.cts"), USAGE("cjs"));
    const args = ["--strict", "--noEmit", "--target", "ES2022", "--module", "node16", "--moduleResolution", "node16",
      "--types", "node", "--typeRoots", path.join(HERE, "node_modules", "@types"), "--traceResolution",
      path.join(consumer, "usage.mts"), path.join(consumer, "usage.cts")];
    let trace: string;
    try {
      trace = execFileSync(TSC, args, { cwd: consumer, encoding: "utf8" });
    } catch (e) {
      const out = e as { stdout?: string };
      return assert.fail(`tsc failed on the consumers:\n${(out.stdout ?? String(e)).split("\n").filter((l) => l.includes("error")).join("\n")}`);
    }
    const resolved = trace.split("\n").filter((l) => l.startsWith("======== Module name 'skillrunner-client' was successfully resolved"));
    const real = fs.realpathSync(HERE);
    assert.ok(resolved.some((l) => l.includes(`'${path.join(real, "dist", "index.d.mts")}'`)), resolved.join("\n"));
    assert.ok(resolved.some((l) => l.includes(`'${path.join(real, "dist", "index.d.ts")}'`)), resolved.join("\n"));
  });

  describe("against a real serve", () => {
    const served = servedTree();

    it("the Client from import() invokes, and its errors are the require() build's classes", async () => {
      const esm = (await import("skillrunner-client")) as typeof import("skillrunner-client");
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const cjs = require("skillrunner-client") as typeof import("skillrunner-client");
      const client = new esm.Client({ socket: served.tree.socket });
      try {
        const result = await client.invoke<{ words: number }>("word_stats", { text: "a b a" }, { timeoutMs: 10_000 });
        assert.equal(result.output.words, 3);
        const e: unknown = await client.invoke("triage_ticket", { subject: "" }).catch((x: unknown) => x);
        assert.ok(e instanceof cjs.InputInvalidError, String(e));
      } finally {
        client.close();
      }
    });
  });
});
