// The official MCP TypeScript SDK as a client of skillrunner, over stdio and Streamable HTTP
// (run by test.sh). Prints "ok - NAME" or "not ok - NAME" and the failure per check; exit 1 when any failed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), []),
);
const BINARY = args.binary;
const TREE = args.tree;
const TOKEN = 'mcp-test-token-3f9a1c';
const TOOLS = ['count_items', 'shout', 'slow', 'summarize'];
const ACCESS_LOG = ['--log-level', 'info', '--log-format', 'json'];

let failures = 0;
async function check(name, body) {
  try {
    await body();
    console.log(`ok - ${name}`);
  } catch (error) {
    failures += 1;
    console.log(`not ok - ${name}`);
    console.log(String(error && error.stack ? error.stack : error).replace(/^/gm, '    '));
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(condition, ms, what) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
    await sleep(25);
  }
}

// The pids of this process's children whose command is skillrunner (the stdio transport's server).
function skillrunnerChildren() {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[1]) === process.pid && stat.includes('(skillrunner)');
      } catch {
        return false;
      }
    })
    .map(Number);
}

// The access-log lines (--log-format json) of `skill`'s calls.
function accessLines(log, skill) {
  return log
    .split('\n')
    .filter((line) => line.includes('"event":"invoke"'))
    .map((line) => JSON.parse(line.slice(line.indexOf('{'))))
    .filter((event) => event.skill === skill);
}

// Every check a transport must pass. `hup` reloads the server; `log` is what it wrote to stderr so far.
async function exercise(label, client, hup, log) {
  await check(`${label}: tools/list has each generation and handler skill with its schemas`, async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name), TOOLS);
    const shout = tools.find((tool) => tool.name === 'shout');
    assert.equal(shout.description, 'Upper-case a text and count its characters (no LLM).');
    assert.deepEqual(shout.inputSchema, {
      type: 'object',
      required: ['text'],
      additionalProperties: false,
      properties: { text: { type: 'string', minLength: 1 } },
    });
    // Draft-07 without $schema, the local ref copied in place.
    assert.deepEqual(shout.outputSchema, {
      type: 'object',
      required: ['upper', 'length'],
      additionalProperties: false,
      properties: { upper: { type: 'string' }, length: { type: 'integer', minimum: 0 } },
    });
    const count = tools.find((tool) => tool.name === 'count_items');
    assert.deepEqual(count.inputSchema, {
      type: 'object',
      properties: { input: { type: 'array', items: { type: 'string' } } },
      required: ['input'],
      additionalProperties: false,
    });
    assert.deepEqual(count.outputSchema, {
      type: 'object',
      properties: { result: { type: 'integer', minimum: 0 } },
      required: ['result'],
      additionalProperties: false,
    });
  });

  await check(`${label}: tools/call answers structuredContent equal to the output, and its JSON as text`, async () => {
    const shouted = await client.callTool({ name: 'shout', arguments: { text: 'hello mcp' } });
    assert.equal(shouted.isError, false);
    assert.deepEqual(shouted.structuredContent, { upper: 'HELLO MCP', length: 9 });
    assert.deepEqual(shouted.content, [{ type: 'text', text: '{"upper":"HELLO MCP","length":9}' }]);
    const counted = await client.callTool({ name: 'count_items', arguments: { input: ['a', 'b', 'c'] } });
    assert.equal(counted.isError, false);
    assert.deepEqual(counted.structuredContent, { result: 3 });
    assert.deepEqual(counted.content, [{ type: 'text', text: '3' }]);
  });

  await check(`${label}: a bad input is isError with its code, pointer and attempts`, async () => {
    const refused = await client.callTool({ name: 'shout', arguments: { text: 5 } });
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent, undefined);
    assert.deepEqual(refused.content, [
      {
        type: 'text',
        text:
          'INPUT_INVALID: input does not match the input_schema of skill "shout" (1 error) (0 attempts)\n' +
          '{"path":"/text","message":"expected string, found number 5"}',
      },
    ]);
    const error = refused._meta['skillrunner/error'];
    assert.equal(error.code, 'INPUT_INVALID');
    assert.equal(error.attempts, 0);
    assert.deepEqual(error.errors, [{ path: '/text', message: 'expected string, found number 5' }]);
  });

  await check(`${label}: an unknown tool is JSON-RPC error -32602`, async () => {
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), (error) => {
      assert.ok(error instanceof McpError, String(error));
      assert.equal(error.code, -32602);
      assert.match(error.message, /Unknown tool: no_such_tool/);
      return true;
    });
  });

  await check(`${label}: a progressToken gets a progress notification per attempt`, async () => {
    const seen = [];
    const result = await client.callTool({ name: 'summarize', arguments: { text: 'A long text about MCP.' } }, undefined, {
      onprogress: (progress) => seen.push(progress),
    });
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(typeof result.structuredContent.summary, 'string');
    assert.deepEqual(seen, [
      { progress: 1, message: 'attempt 1' },
      { progress: 2, message: 'attempt 1 abandoned (validation); retrying' },
    ]);
  });

  await check(`${label}: cancelling a slow call cancels its invocation`, async () => {
    const controller = new AbortController();
    const started = Date.now();
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('the test cancels it'), 500);
    await assert.rejects(call);
    await waitFor(() => accessLines(log(), 'slow').length > 0, 10000, 'access-log line of the slow call');
    const [line] = accessLines(log(), 'slow');
    assert.equal(line.outcome, 'CANCELLED');
    assert.equal(line.mcp, true);
    assert.ok(Date.now() - started < 10000, `cancelled after ${Date.now() - started} ms (the skill takes 30 s)`);
    // The session goes on: the next call is answered.
    const after = await client.callTool({ name: 'count_items', arguments: { input: [] } });
    assert.deepEqual(after.structuredContent, { result: 0 });
  });

  await check(`${label}: a reload sends notifications/tools/list_changed and lists the new tool`, async () => {
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    const added = path.join(TREE, 'skills', `echo_${label}`);
    fs.mkdirSync(added);
    fs.writeFileSync(
      path.join(added, 'skill.yaml'),
      [
        `id: echo_${label}`,
        'version: 1',
        'description: Echo the input (added while serving).',
        'handler: exec',
        'command: [python3, -c, "import sys; print(sys.stdin.read())"]',
        'input_schema: { type: object }',
        'output_schema: { type: object }',
        '',
      ].join('\n'),
    );
    try {
      hup();
      await waitFor(() => changed > 0, 10000, 'notifications/tools/list_changed');
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), [...TOOLS, `echo_${label}`].sort());
      const echoed = await client.callTool({ name: `echo_${label}`, arguments: { a: 1 } });
      assert.deepEqual(echoed.structuredContent, { a: 1 });
    } finally {
      fs.rmSync(added, { recursive: true, force: true });
    }
  });
}

async function overStdio() {
  const transport = new StdioClientTransport({
    command: BINARY,
    args: [...ACCESS_LOG, 'mcp'],
    cwd: TREE,
    env: { ...process.env },
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr.on('data', (chunk) => {
    log += chunk;
  });
  const client = new Client({ name: 'skillrunner-mcp-test', version: '1.0.0' });
  await client.connect(transport);
  const hup = () => {
    const pids = skillrunnerChildren();
    assert.equal(pids.length, 1, `skillrunner children: ${pids}`);
    process.kill(pids[0], 'SIGHUP');
  };
  await check('stdio: initialize settles on 2025-06-18', async () => {
    assert.equal(client.getServerVersion().name, 'skillrunner');
    assert.deepEqual(client.getServerCapabilities().tools, { listChanged: true });
  });
  await exercise('stdio', client, hup, () => log);
  await client.close();
  if (failures > 0) console.log(`    skillrunner mcp said:\n${log.replace(/^/gm, '    ')}`);
}

// `serve --mcp-listen 127.0.0.1:0` with a token; resolves with the process, its URL and its log.
async function startServe() {
  const server = spawn(BINARY, [...ACCESS_LOG, 'serve', '--mcp-listen', '127.0.0.1:0'], {
    cwd: TREE,
    env: { ...process.env, SKILLRUNNER_TOKEN: TOKEN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const state = { server, log: '', exited: null };
  server.stderr.on('data', (chunk) => {
    state.log += chunk;
  });
  server.on('exit', (code, signal) => {
    state.exited = { code, signal };
  });
  const listening = /MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/;
  await waitFor(() => listening.test(state.log) || state.exited, 10000, 'listening line');
  if (state.exited) throw new Error(`serve exited: ${JSON.stringify(state.exited)}\n${state.log}`);
  state.url = state.log.match(listening)[1];
  return state;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function post(url, headers, body = INITIALIZE) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function refusals(url) {
  const auth = { authorization: `Bearer ${TOKEN}` };
  await check('http: no token is 401 with WWW-Authenticate: Bearer', async () => {
    const answer = await post(url, {});
    assert.equal(answer.status, 401);
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
    assert.equal(JSON.parse(answer.body).error.message, 'Unauthorized: a valid bearer token is required');
    assert.equal((await post(url, { authorization: 'Bearer wrong' })).status, 401);
  });
  await check('http: a non-loopback Origin is 403', async () => {
    const answer = await post(url, { ...auth, origin: 'http://evil.example' });
    assert.equal(answer.status, 403);
    assert.equal(JSON.parse(answer.body).error.message, 'Forbidden: Origin http://evil.example is not a loopback origin');
    assert.equal((await post(url, { ...auth, origin: 'http://localhost:6274' })).status, 200);
  });
  await check('http: a request without Mcp-Session-Id is 400, an unknown one 404', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const missing = await post(url, auth, list);
    assert.equal(missing.status, 400);
    assert.match(JSON.parse(missing.body).error.message, /Mcp-Session-Id header is required/);
    const unknown = await post(url, { ...auth, 'mcp-session-id': '0123456789abcdef' }, list);
    assert.equal(unknown.status, 404);
  });
  await check('http: initialize names a new session in Mcp-Session-Id; an unknown protocol version is 400', async () => {
    const opened = await post(url, auth);
    assert.equal(opened.status, 200);
    const id = opened.headers.get('mcp-session-id');
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(JSON.parse(opened.body).result.protocolVersion, '2025-06-18');
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const odd = await post(url, { ...auth, 'mcp-session-id': id, 'mcp-protocol-version': '1999-01-01' }, list);
    assert.equal(odd.status, 400);
    assert.equal(JSON.parse(odd.body).error.message, 'Bad Request: unsupported MCP-Protocol-Version 1999-01-01');
  });
}

async function overHttp() {
  const state = await startServe();
  try {
    await refusals(state.url);
    const transport = new StreamableHTTPClientTransport(new URL(state.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    const client = new Client({ name: 'skillrunner-mcp-test', version: '1.0.0' });
    await client.connect(transport);
    await exercise('http', client, () => state.server.kill('SIGHUP'), () => state.log);
    await check('http: DELETE ends the session', async () => {
      const id = transport.sessionId;
      await transport.terminateSession();
      const list = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' });
      const gone = await post(state.url, { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': id }, list);
      assert.equal(gone.status, 404);
    });
    await client.close();
    await check('http: SIGTERM drains and serve exits 0', async () => {
      state.server.kill('SIGTERM');
      await waitFor(() => state.exited, 15000, 'exit after SIGTERM');
      assert.deepEqual(state.exited, { code: 0, signal: null });
    });
  } finally {
    if (!state.exited) state.server.kill('SIGKILL');
    if (failures > 0) console.log(`    skillrunner serve said:\n${state.log.replace(/^/gm, '    ')}`);
  }
}

await overStdio();
await overHttp();
console.log(failures === 0 ? 'all MCP checks passed' : `${failures} MCP check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
