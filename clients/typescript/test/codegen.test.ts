/**
 * `skillrunner codegen typescript`: the generated skills.ts for the shipped skills passes
 * tsc --strict (with type-level checks that fail to compile if the types were loose), a
 * generated call against a real serve returns the typed output, a compatible schema change on
 * the server is accepted, and a breaking one (served at a higher version) rejects the generated
 * call with SchemaChangedError naming both versions, on connections opened before and after it.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";

import { Client, ConfigInvalidError, ReviewFailedError, SchemaChangedError, raiseForReview } from "skillrunner-client";
import { BINARY, REPO, Server, Tree, makeTree, removeTree } from "./helpers";

// Inside the package folder, so that "skillrunner-client" resolves to this package (self-reference).
const HERE = path.resolve(__dirname, "..");
const GEN = path.join(HERE, "build-codegen");
const TSC = path.join(HERE, "node_modules", ".bin", "tsc");

// Compiles only if the generated types are as strict as the schemas: each @ts-expect-error line
// must be an error, or tsc fails with "Unused '@ts-expect-error' directive".
const USAGE = `import { Client } from "skillrunner-client";
import { triageTicket, wordStats, TriageTicketOutput } from "./skills";

export async function use(client: Client): Promise<TriageTicketOutput> {
  const out = await triageTicket(client, { subject: "Cannot log in", body: "Since this morning." }, { timeoutMs: 5000 });
  const priority: number = out.priority;
  const category: "billing" | "bug" | "account" | "feature_request" | "other" = out.category;
  const stats = await wordStats(client, { text: "a b a", top: 1 });
  const first: string | undefined = stats.top_words[0]?.word;
  void priority, category, first;
  return out;
}

// Never called: type checks only.
export async function wrongUses(client: Client): Promise<void> {
  const out = await triageTicket(client, { subject: "x", body: "y" });
  // @ts-expect-error category is a union of the enum's literals, not any string
  const notACategory: "nope" = out.category;
  // @ts-expect-error body is required
  await triageTicket(client, { subject: "x" });
  // @ts-expect-error customer_tier takes the enum's literals only
  await triageTicket(client, { subject: "x", body: "y", customer_tier: "gold" });
  void notACategory;
}
`;

function generate(skills: string, config: string): void {
  fs.rmSync(GEN, { recursive: true, force: true });
  execFileSync(BINARY, ["--provider", "simulated", "--skills", skills, "--rubrics", path.join(REPO, "rubrics"), "--config", config,
    "codegen", "typescript", "--out", GEN], { cwd: REPO, stdio: "pipe" });
}

function compile(): void {
  const args = ["--strict", "--noUnusedLocals", "--target", "ES2022", "--module", "node16", "--moduleResolution", "node16",
    "--types", "node", "--rootDir", GEN, "--outDir", path.join(GEN, "out"), path.join(GEN, "skills.ts"), path.join(GEN, "usage.ts")];
  try {
    execFileSync(TSC, args, { cwd: HERE, stdio: "pipe" });
  } catch (e) {
    const out = e as { stdout?: Buffer };
    assert.fail(`tsc --strict failed on the generated code:\n${out.stdout?.toString() ?? String(e)}`);
  }
}

describe("generated TypeScript functions", () => {
  let tree: Tree;
  let server: Server;
  let client: Client;

  before(async () => {
    tree = makeTree(0);
    server = await Server.start(tree);
    client = new Client({ socket: tree.socket });
    // The tree is the shipped skills plus the tests' own: one generation and one tsc run serve both tests.
    generate(tree.skills, tree.config);
    fs.writeFileSync(path.join(GEN, "usage.ts"), USAGE);
    compile();
  });
  after(async () => {
    client.close();
    await server.stop();
    removeTree(tree);
    fs.rmSync(GEN, { recursive: true, force: true });
  });

  it("the shipped skills' file passes tsc --strict and a generated call returns the typed output", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const usage = require(path.join(GEN, "out", "usage.js")) as { use(c: Client): Promise<{ priority: number; category: string }> };
    const out = await usage.use(client);
    assert.ok(Number.isInteger(out.priority) && out.priority >= 1 && out.priority <= 4, JSON.stringify(out));
    assert.ok(["billing", "bug", "account", "feature_request", "other"].includes(out.category), JSON.stringify(out));
  });

  it("a compatible change is accepted; a breaking one at a higher version rejects on old and new connections", async () => {
    const skills = require(path.join(GEN, "out", "skills.js")) as {
      schemaHashes: Record<string, string>;
      skillVersions: Record<string, number>;
      triageTicket(c: Client, input: object): Promise<{ category: string }>;
    };
    const ticket = { subject: "a", body: "b" };
    const generated = skills.schemaHashes["triage_ticket"];
    assert.equal(skills.skillVersions["triage_ticket"], 1);
    const file = path.join(tree.skills, "triage_ticket", "skill.yaml");
    const early = new Client({ socket: tree.socket });
    try {
      await skills.triageTicket(early, ticket);
      // An optional input member: compatible, the version stays 1; both connections call on.
      const text = fs.readFileSync(file, "utf8").replace("    customer_tier: { enum: [free, pro, enterprise] }\n",
        "    customer_tier: { enum: [free, pro, enterprise] }\n    locale: { type: string }\n");
      fs.writeFileSync(file, text);
      assert.equal((await client.reload()).ok, true);
      // skills.changed reached `early` before the answer to a request it sends after the reload.
      await early.call("health");
      assert.notEqual((await client.list()).find((s) => s.id === "triage_ticket")?.schema_hash, generated);
      await skills.triageTicket(early, ticket);
      await skills.triageTicket(client, ticket);
      // A required output member removed, at version 2.
      const broken = text.replace("required: [priority, category, summary, needs_human]", "required: [priority, category, summary]")
        .replace("    needs_human: { type: boolean }\n", "");
      fs.writeFileSync(file, broken);
      const refused: unknown = await client.reload().catch((x: unknown) => x);
      assert.ok(refused instanceof ConfigInvalidError, String(refused));
      const diagnostics = refused.details.diagnostics as Array<Record<string, unknown>>;
      assert.deepEqual([diagnostics[0]?.code, diagnostics[0]?.line, diagnostics[0]?.col], ["breaking-change", 4, 10]);
      fs.writeFileSync(file, broken.replace("version: 1\n", "version: 2\n"));
      assert.equal((await client.reload()).ok, true);
      await early.call("health");
      const now = (await client.list()).find((s) => s.id === "triage_ticket")?.schema_hash;
      const fresh = new Client({ socket: tree.socket });
      const errors = [await skills.triageTicket(early, ticket).catch((x: unknown) => x), await skills.triageTicket(fresh, ticket).catch((x: unknown) => x)];
      fresh.close();
      for (const e of errors) {
        assert.ok(e instanceof SchemaChangedError, String(e));
        assert.equal(
          e.message,
          `skill "triage_ticket" changed on the server in a way that breaks this caller: generated against version 1 (${generated}), server has version 2 (${now}); regenerate the stubs`,
        );
        assert.equal(e.details.actual_version, 2);
      }
    } finally {
      early.close();
    }
  });
  it("an answer its review gate failed rejects with ReviewFailedError unless allowReviewFailure", async () => {
    const skills = require(path.join(GEN, "out", "skills.js")) as {
      extractContact(c: Client, input: object, options?: { allowReviewFailure?: boolean }): Promise<Record<string, unknown>>;
    };
    // extract_contact's gate: the generation (1), its judge (2), the regeneration (3), the judge (4).
    const failing = makeTree(0);
    fs.writeFileSync(failing.config, "providers:\n  simulated:\n    kind: simulated\n    faults:\n" +
      "      - { skill: extract_contact.review, attempt: [2, 4], fault: verdict, verdict: fail }\n");
    const gated = await Server.start(failing);
    const caller = new Client({ socket: failing.socket });
    try {
      const input = { text: "Ada Lovelace, ada@example.com" };
      const e: unknown = await skills.extractContact(caller, input).catch((x: unknown) => x);
      assert.ok(e instanceof ReviewFailedError, String(e));
      assert.equal(e.code, "REVIEW_FAILED");
      assert.equal(e.review.pass, false);
      assert.equal(e.message, `the review gate of skill extract_contact failed its answer: ${(e.review.issues as string[]).join("; ")}`);
      assert.equal(e.attempts.length, 4);
      const allowed = await skills.extractContact(caller, input, { allowReviewFailure: true });
      assert.equal(typeof allowed.name, "string");
      const result = await caller.invoke("extract_contact", input);
      assert.equal(result.reviewPassed, false);
      assert.throws(() => raiseForReview(result), ReviewFailedError);
      assert.equal((await caller.invoke("triage_ticket", { subject: "a", body: "b" })).reviewPassed, null);
    } finally {
      caller.close();
      await gated.stop();
      removeTree(failing);
    }
  });
});
