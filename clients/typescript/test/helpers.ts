/**
 * Test support: a temporary skill tree (the repository's skills plus a few
 * test-only ones) and a real `skillrunner serve` started on it, with its log.
 */
import { ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before } from "node:test";

/** The repository root (this file runs from clients/typescript/build-test/). */
export const REPO = path.resolve(__dirname, "..", "..", "..");
/** The server binary: $SKILLRUNNER_BINARY, else <repo>/build/skillrunner. */
export const BINARY = process.env.SKILLRUNNER_BINARY ?? path.join(REPO, "build", "skillrunner");

/** A generation skill whose every attempt gets `fault` from the simulated provider. */
function faultSkill(id: string, fault: string, extra = ""): string {
  return `id: ${id}
version: 1
description: Test skill whose answers all get the ${fault} fault.
template_type: LLM_JSON_GENERATION
model: gpt-4o-mini
input_schema: { type: object, properties: { text: { type: string } } }
output_schema:
  type: object
  required: [label]
  additionalProperties: false
  properties: { label: { type: string } }
prompt: { system: Label the text., user: "{{input.text}}" }
simulation:
  faults:
    - { attempt: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], fault: ${fault}${extra} }
`;
}

/** A handler skill running `python3 -c CODE` (input on stdin, JSON out). */
function handlerSkill(id: string, code: string): string {
  return `id: ${id}
version: 1
description: Test handler skill.
handler: exec
command: [python3, -c, ${JSON.stringify(code)}]
timeout_ms: 60000
input_schema: { type: object }
output_schema: { type: object }
`;
}

const TEST_SKILLS: Record<string, string> = {
  t_refusal: faultSkill("t_refusal", "refusal"),
  t_truncate: faultSkill("t_truncate", "truncate"),
  t_filter: faultSkill("t_filter", "content_filter"),
  t_invalid_json: faultSkill("t_invalid_json", "invalid_json"),
  t_unavailable: faultSkill("t_unavailable", "unavailable", ", retry_after_ms: 5"),
  h_fail: handlerSkill("h_fail", "import sys; sys.stderr.write('boom'); sys.exit(3)"),
  h_sleep: handlerSkill("h_sleep", "import json, sys, time; s = json.load(sys.stdin).get('seconds', 1); time.sleep(s); print(json.dumps({'slept': s}))"),
};

/** A temporary tree: `skills` (repo skills + test skills), `config`, and a socket path. */
export interface Tree {
  dir: string;
  skills: string;
  config: string;
  socket: string;
}

/** Writes a tree whose simulated provider waits `latencyMs` before each answer. */
export function makeTree(latencyMs: number, opts: { broken?: boolean } = {}): Tree {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "srts-"));
  const skills = path.join(dir, "skills");
  fs.cpSync(path.join(REPO, "skills"), skills, { recursive: true });
  for (const [id, text] of Object.entries(TEST_SKILLS)) {
    fs.mkdirSync(path.join(skills, id));
    fs.writeFileSync(path.join(skills, id, "skill.yaml"), text);
  }
  if (opts.broken) {
    fs.mkdirSync(path.join(skills, "broken"));
    fs.writeFileSync(path.join(skills, "broken", "skill.yaml"), "id: broken\nversion: 1\ntemplate_type: NOPE\n");
  }
  const config = path.join(dir, "skillrunner.yaml");
  fs.writeFileSync(config, `providers:\n  simulated: { kind: simulated, latency_ms: ${latencyMs} }\n`);
  return { dir, skills, config, socket: path.join(dir, "s.sock") };
}

/** Options of one server run. */
export interface ServeOptions {
  args?: string[];
  env?: Record<string, string>;
  tcp?: boolean;
  noSocket?: boolean;
  allowBroken?: boolean;
}

/** A running `skillrunner serve` with its captured log (stdout and stderr, by line). */
export class Server {
  readonly log: string[] = [];
  port = 0;
  private exited: Promise<number | null>;

  private constructor(
    readonly tree: Tree,
    private readonly proc: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => proc.on("exit", (code) => resolve(code)));
    let partial = "";
    const onData = (chunk: Buffer): void => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      this.log.push(...lines);
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
  }

  /** Starts serve on the tree and resolves once it listens. */
  static async start(tree: Tree, opts: ServeOptions = {}): Promise<Server> {
    const args = ["--provider", "simulated", "--skills", tree.skills, "--rubrics", path.join(REPO, "rubrics"), "--config", tree.config];
    args.push("--log-level", "info", "--log-format", "json", "serve");
    if (!opts.noSocket) args.push("--socket", tree.socket);
    if (opts.tcp) args.push("--listen", "127.0.0.1:0");
    if (opts.allowBroken) args.push("--allow-broken");
    args.push(...(opts.args ?? []));
    const env: NodeJS.ProcessEnv = { ...process.env, ...(opts.env ?? {}) };
    if (!opts.env?.SKILLRUNNER_TOKEN) delete env.SKILLRUNNER_TOKEN;
    const proc = spawn(BINARY, args, { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
    const server = new Server(tree, proc);
    proc.on("error", (err) => server.log.push(`spawn ${BINARY} failed: ${err.message} (set SKILLRUNNER_BINARY)`));
    await server.waitForLog((line) => line.includes("listening on"), 15_000);
    const port = /port (\d+)/.exec(server.log.join("\n"));
    if (port) server.port = Number(port[1]);
    return server;
  }

  /** Resolves when a log line matches, or rejects after `timeoutMs`. */
  async waitForLog(match: (line: string) => boolean, timeoutMs = 5_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const line = this.log.find(match);
      if (line !== undefined) return line;
      if (this.proc.exitCode !== null || this.log.some((l) => l.startsWith("spawn "))) throw new Error(`serve exited ${this.proc.exitCode}:\n${this.log.join("\n")}`);
      if (Date.now() > until) throw new Error(`no matching log line within ${timeoutMs} ms:\n${this.log.join("\n")}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The `invoke` events of the JSON log. */
  invokeEvents(): Array<Record<string, unknown>> {
    return this.log
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((event) => event.event === "invoke");
  }

  /** Sends a signal (SIGSTOP/SIGCONT to freeze the server). */
  signal(sig: NodeJS.Signals): void {
    this.proc.kill(sig);
  }

  /**
   * Freezes the server (SIGSTOP) and resolves once it is really stopped: kill() returns before the
   * process is, and a server still running for a moment can read a request sent just after.
   */
  async freeze(): Promise<void> {
    this.proc.kill("SIGSTOP");
    const stat = `/proc/${this.proc.pid}/stat`;
    for (const end = Date.now() + 5_000; Date.now() < end; ) {
      const fields = fs.readFileSync(stat, "utf8");
      if (fields.slice(fields.lastIndexOf(")") + 2).startsWith("T")) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error("the server did not stop within 5 s of SIGSTOP");
  }

  /** Stops the server (SIGTERM drains; SIGKILL drops every connection at once) and waits for it. */
  async stop(sig: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill("SIGCONT");
      this.proc.kill(sig);
    }
    return this.exited;
  }
}

/** Canonical JSON: object keys sorted (by UTF-8 bytes) at every level, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** `sha256:<hex>` of the canonical JSON of `{input, output}` schemas. */
export function schemaHash(inputSchema: unknown, outputSchema: unknown): string {
  return "sha256:" + createHash("sha256").update(canonicalJson({ input: inputSchema, output: outputSchema })).digest("hex");
}

/** Milliseconds since `start`. */
export function since(start: number): number {
  return Date.now() - start;
}

/** Deletes a tree made by makeTree. */
export function removeTree(tree: Tree): void {
  fs.rmSync(tree.dir, { recursive: true, force: true });
}

/**
 * A tree (makeTree(latencyMs)) and a server on it for the tests of the enclosing describe block:
 * made before the first test, stopped and removed after the last. Read its members inside the tests.
 */
export function servedTree(latencyMs = 0): { tree: Tree; server: Server } {
  const served = {} as { tree: Tree; server: Server };
  before(async () => {
    served.tree = makeTree(latencyMs);
    served.server = await Server.start(served.tree);
  });
  after(async () => {
    await served.server.stop();
    removeTree(served.tree);
  });
  return served;
}
