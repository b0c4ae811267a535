/**
 * The skillrunner client: one lazily opened connection (Unix socket or TCP)
 * that pipelines every call, deadlines that send `$/cancel`, AbortSignal
 * cancellation, OVERLOADED retried after the server's hint, and typed errors.
 */
import * as net from "node:net";
import * as tls from "node:tls";

import { Connection, Endpoint, Notification, SkillStamp } from "./connection";
import {
  Attempt,
  ConnectionLostError,
  OverloadedError,
  ProtocolError,
  ReviewFailedError,
  SchemaChangedError,
  SkillCancelledError,
  SkillTimeoutError,
  isObject,
} from "./errors";

/** How to reach the server: `{socket}` or `{host, port, token?, tls?}`, plus tuning. */
export interface ClientOptions {
  /** Unix socket path of `skillrunner serve --socket`. */
  socket?: string;
  /** TCP host of `skillrunner serve --listen` (with `port`). */
  host?: string;
  /** TCP port. */
  port?: number;
  /** Token for a TCP listener whose server has SKILLRUNNER_TOKEN; sent as `auth` in every request. */
  token?: string;
  /**
   * TLS to a TCP listener of `serve --tls-cert` (TLS 1.2 or newer): `{}` verifies the server against
   * the system's CAs, `{ca}` against those; `cert` and `key` are the client certificate that a server
   * with `--tls-client-ca` asks for. PEM text or Buffers, read by the caller.
   */
  tls?: TlsOptions;
  /**
   * How `host` is resolved (Node's `net.connect` `lookup`; default `dns.lookup`). Every address it
   * gives is tried, IPv6 and IPv4 alike, until one connects.
   */
  lookup?: net.LookupFunction;
  /** Give up connecting after this long (default 10000 ms). */
  connectTimeoutMs?: number;
  /** How long past `timeoutMs` to wait for the server's own TIMEOUT before sending `$/cancel` (default 1000 ms). */
  timeoutGraceMs?: number;
  /** OVERLOADED retries of a call without a deadline (default 5). */
  maxOverloadedRetries?: number;
  /** Longest request line the client sends (default 1 MiB, the server's default `--max-line-bytes`). */
  maxLineBytes?: number;
}

/** The `tls` connection option: PEM strings or Buffers (e.g. `fs.readFileSync("ca.pem")`). */
export interface TlsOptions {
  /** The CA certificate(s) the server's certificate must chain to; default: the system's CAs. */
  ca?: string | Buffer;
  /** The client certificate (mutual TLS), with `key`. */
  cert?: string | Buffer;
  /** The client certificate's private key (unencrypted PEM). */
  key?: string | Buffer;
}

/** Per-call options of `invoke`. */
export interface InvokeOptions {
  /** Deadline in ms: sent as `options.timeout_ms`; the client gives up (TIMEOUT) after it plus the grace. */
  timeoutMs?: number;
  /** Aborting sends `$/cancel` and rejects with CANCELLED at once. */
  signal?: AbortSignal;
  /**
   * `sha256:<hex>` the caller was generated against; checked against `skills.list` once per
   * connection and again after each `skills.changed`. Another hash raises SCHEMA_CHANGED, unless
   * `skillVersion` is given and the server's skill is still at that version (a compatible change).
   */
  schemaHash?: string;
  /**
   * The skill's version the caller was generated against (the generated functions pass it). It
   * only qualifies the `schemaHash` check and does not choose what runs: `version` does.
   */
  skillVersion?: number;
  /**
   * Sent as `options.routing_key`: what the skill's rollout assigns the call by, so that calls with
   * the same key get the same version (docs/rollouts.md). 1 to 1024 characters (the server checks).
   */
  routingKey?: string;
  /**
   * Sent as `options.version`: run this version of the skill, its stable one or its rollout's
   * candidate (SKILL_NOT_FOUND for any other; a pinned call is not counted by the rollout).
   * The result's `skillVersion` and `arm` say which version answered.
   */
  version?: number;
}

/** Options of `stream`: those of `invoke`, and the pace of the partials. */
export interface StreamOptions extends InvokeOptions {
  /** At most one `skills.partial` per this many ms (0 to 10000; 0: every one; the server's default 25). */
  partialIntervalMs?: number;
}

/** Per-call options of the other methods (no server-side deadline: the client stops waiting). */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A successful invocation (design.md §6.1 success shape). */
export interface InvokeResult<O = unknown> {
  skill: string;
  output: O;
  /** The review gate's final verdict, or null when the skill has no review. */
  review: Record<string, unknown> | null;
  /**
   * Whether the review gate passed the answer: false when it failed it (the answer is returned all
   * the same; `raiseForReview` turns that into a ReviewFailedError), null without a review gate.
   */
  reviewPassed: boolean | null;
  attempts: Attempt[];
  metrics: Record<string, unknown>;
  /** The version of the skill that answered (its rollout's candidate's when it sent the call there). */
  skillVersion: number | null;
  /** "stable" or "candidate" for a skill with a rollout; null without. */
  arm: "stable" | "candidate" | null;
}

/**
 * An event of a streamed invocation: `skills.partial` ({id, attempt, value,
 * complete}) as the answer grows, `skills.reset` ({id, attempt, reason,
 * errors}) when an attempt is abandoned (drop what was shown for it).
 */
export type StreamEvent = Notification;

/** When to give up on one call, and what stops it early. */
interface Control {
  giveUpAt?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_RETRY_AFTER_MS = 100;

/** A client for one server; safe to share: all calls pipeline over one connection. */
export class Client {
  private readonly endpoint: Endpoint;
  private readonly token: string | undefined;
  private readonly connectTimeoutMs: number;
  private readonly graceMs: number;
  private readonly maxOverloadedRetries: number;
  private readonly maxLineBytes: number;
  private readonly secureContext: tls.SecureContext | undefined;
  private conn: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  private nextId = 1;
  private closed = false;

  /** Takes `{socket}` or `{host, port, token?, tls?}`; nothing is connected until the first call. */
  constructor(options: ClientOptions) {
    this.endpoint = endpointOf(options);
    this.secureContext = secureContextOf(options);
    this.token = options.token;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.graceMs = options.timeoutGraceMs ?? 1_000;
    this.maxOverloadedRetries = options.maxOverloadedRetries ?? 5;
    this.maxLineBytes = options.maxLineBytes ?? 1 << 20;
  }

  /**
   * Invokes a skill and resolves with its result; rejects with a
   * SkillrunnerError subclass (InputInvalidError, SkillTimeoutError, ...).
   * OVERLOADED is retried after `retry_after_ms` while that fits the deadline
   * (without one: at most `maxOverloadedRetries` times).
   */
  async invoke<O = unknown>(skill: string, input: unknown, options: InvokeOptions = {}): Promise<InvokeResult<O>> {
    checkTimeout(options.timeoutMs);
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    for (let retries = 0; ; retries++) {
      try {
        return await this.invokeOnce<O>(skill, input, options, deadline);
      } catch (error) {
        const wait = this.overloadedWait(error, retries, deadline);
        if (wait === undefined) throw withRetries(error, retries);
        await sleep(wait, options.signal);
      }
    }
  }

  /**
   * Invokes a skill with `"stream": true`: yields each StreamEvent as it
   * arrives, then the InvokeResult (tell them apart by `"method" in item`).
   * Errors reject as from `invoke` (no OVERLOADED retry: events may have been
   * shown). Leaving the loop early sends `$/cancel`.
   */
  async *stream<O = unknown>(skill: string, input: unknown, options: StreamOptions = {}): AsyncGenerator<StreamEvent | InvokeResult<O>, void, undefined> {
    checkTimeout(options.timeoutMs);
    const ctl: Control = { signal: options.signal, timeoutMs: options.timeoutMs };
    const streamOptions: Record<string, unknown> = { stream: true };
    if (options.partialIntervalMs !== undefined) streamOptions.partial_interval_ms = options.partialIntervalMs;
    if (options.timeoutMs !== undefined) {
      ctl.giveUpAt = Date.now() + options.timeoutMs + this.graceMs;
      streamOptions.timeout_ms = options.timeoutMs;
    }
    addRollout(streamOptions, options);
    const conn = await this.connection(ctl);
    const events: StreamEvent[] = [];
    let wake: (() => void) | undefined;
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
    const id = this.nextId;
    const answer = this.send(conn, "skills.invoke", { skill, input, options: streamOptions }, ctl, true, (event) => {
      events.push(event);
      wake?.();
    });
    answer.then(
      (value) => ((outcome = { ok: true, value }), wake?.()),
      (error: unknown) => ((outcome = { ok: false, error }), wake?.()),
    );
    try {
      for (;;) {
        while (events.length > 0) yield events.shift() as StreamEvent;
        if (outcome) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (!outcome.ok) throw outcome.error;
      yield toInvokeResult<O>(outcome.value);
    } finally {
      if (!outcome) conn.cancel(id);
    }
  }

  /** The server's `health` answer (status, in_flight, connections, limits, ...). */
  health(options: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.call("health", undefined, options) as Promise<Record<string, unknown>>;
  }

  /** `skills.list`: one summary per loaded skill (`id`, `version`, `schema_hash`, ...). */
  list(options: CallOptions = {}): Promise<Array<Record<string, unknown>>> {
    return this.call("skills.list", undefined, options) as Promise<Array<Record<string, unknown>>>;
  }

  /** `skills.describe`: the summary plus `input_schema`, `output_schema`, rubric and descriptor. */
  describe(skill: string, options: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.call("skills.describe", { skill }, options) as Promise<Record<string, unknown>>;
  }

  /** `skills.reload`: swaps in a freshly loaded tree (or rejects, keeping the old one). */
  reload(options: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.call("skills.reload", undefined, options) as Promise<Record<string, unknown>>;
  }

  /** Sends any JSON-RPC method (e.g. `metrics`) and resolves with its `result`. */
  async call(method: string, params?: unknown, options: CallOptions = {}): Promise<unknown> {
    const ctl: Control = { ...options, giveUpAt: options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs };
    const conn = await this.connection(ctl);
    return this.send(conn, method, params, ctl, false);
  }

  /** Closes the connection; in-flight calls reject with CONNECTION_LOST and later calls are refused. */
  close(): void {
    this.closed = true;
    this.conn?.close();
    this.conn = undefined;
  }

  /** One `skills.invoke` request (after the schema check when asked for). */
  private async invokeOnce<O>(skill: string, input: unknown, options: InvokeOptions, deadline: number | undefined): Promise<InvokeResult<O>> {
    const ctl: Control = { signal: options.signal, timeoutMs: options.timeoutMs };
    if (deadline !== undefined) ctl.giveUpAt = deadline + this.graceMs;
    const conn = await this.connection(ctl);
    if (options.schemaHash !== undefined) await this.checkSchema(conn, skill, { schemaHash: options.schemaHash, version: options.skillVersion }, ctl);
    const params: Record<string, unknown> = { skill, input };
    const invokeOptions: Record<string, unknown> = {};
    if (deadline !== undefined) invokeOptions.timeout_ms = Math.max(1, Math.round(deadline - Date.now()));
    addRollout(invokeOptions, options);
    if (Object.keys(invokeOptions).length > 0) params.options = invokeOptions;
    return toInvokeResult<O>(await this.send(conn, "skills.invoke", params, ctl, true));
  }

  /** How long to wait before retrying an OVERLOADED call, or undefined to give up (any other error too). */
  private overloadedWait(error: unknown, retries: number, deadline: number | undefined): number | undefined {
    if (!(error instanceof OverloadedError)) return undefined;
    const hint = error.details.retry_after_ms;
    const wait = typeof hint === "number" && hint >= 0 ? hint : DEFAULT_RETRY_AFTER_MS;
    if (deadline !== undefined) return Date.now() + wait < deadline ? wait : undefined;
    return retries < this.maxOverloadedRetries ? wait : undefined;
  }

  /** The open connection, opening one when there is none (concurrent callers share the attempt). */
  private connection(ctl: Control): Promise<Connection> {
    if (this.closed) return Promise.reject(new ConnectionLostError("CONNECTION_LOST", "the client is closed"));
    if (this.conn?.isOpen) return Promise.resolve(this.conn);
    if (!this.connecting) {
      this.connecting = Connection.open(this.endpoint, this.connectTimeoutMs, this.secureContext).then(
        (conn) => {
          this.connecting = undefined;
          if (this.closed) conn.close();
          else this.conn = conn;
          return conn;
        },
        (error: unknown) => {
          this.connecting = undefined;
          throw error;
        },
      );
      this.connecting.catch(() => undefined);
    }
    return guard(this.connecting, ctl, () => undefined);
  }

  /**
   * Compares the skill in `skills.list` (fetched once per connection, then kept up to date by
   * `skills.changed`) with what the caller was generated against: the same hash passes, and so
   * does another hash at the same version when `expected.version` is given (a compatible change;
   * the server refuses a breaking one unless the version rises). Anything else, or a missing skill,
   * rejects with SCHEMA_CHANGED. A server that reports no hash is not checked.
   */
  private async checkSchema(conn: Connection, skill: string, expected: SkillStamp, ctl: Control): Promise<void> {
    if (!conn.skills) {
      if (!conn.listing) {
        const listing = this.send(conn, "skills.list", undefined, { giveUpAt: Date.now() + this.connectTimeoutMs }, false);
        conn.listing = listing;
        void listing
          .catch(() => undefined)
          .finally(() => {
            if (conn.listing === listing) conn.listing = undefined;
          });
      }
      await guard(conn.listing, ctl, () => undefined);
      if (!conn.skills) throw new ProtocolError("PROTOCOL_ERROR", "skills.list answered something other than a list");
    }
    const actual = conn.skills.get(skill);
    if (actual && (actual.schemaHash === expected.schemaHash || actual.schemaHash === "")) return;
    if (actual && expected.version !== undefined && actual.version === expected.version) return;
    throw schemaChanged(skill, expected, actual);
  }

  /** Writes one request on `conn` and waits for its answer within `ctl`. */
  private send(
    conn: Connection,
    method: string,
    params: unknown,
    ctl: Control,
    cancelOnStop: boolean,
    onEvent?: (event: StreamEvent) => void,
  ): Promise<unknown> {
    const id = this.nextId++;
    const request: Record<string, unknown> = { jsonrpc: "2.0", id, method };
    if (params !== undefined) request.params = params;
    if (this.token !== undefined) request.auth = this.token;
    const line = JSON.stringify(request);
    const bytes = Buffer.byteLength(line);
    if (bytes > this.maxLineBytes) {
      const details = { jsonrpc_code: -32600, line_bytes: bytes, max_line_bytes: this.maxLineBytes };
      return Promise.reject(new ProtocolError("PROTOCOL_ERROR", `request of ${bytes} bytes exceeds the ${this.maxLineBytes}-byte line limit`, [], details));
    }
    if (ctl.signal?.aborted) return Promise.reject(cancelledError(ctl.signal));
    const stop = (): void => (cancelOnStop ? conn.cancel(id) : conn.forget(id));
    if (onEvent) conn.listen(id, onEvent);
    return guard(conn.request(id, line + "\n", method === "skills.list"), ctl, stop);
  }
}

/** Rejects a timeoutMs the server would refuse (it takes 1 to 86400000) as PROTOCOL_ERROR -32602. */
function checkTimeout(timeoutMs: number | undefined): void {
  if (timeoutMs === undefined || (Number.isFinite(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 86_400_000)) return;
  const message = "expected a number of milliseconds from 1 to 86400000";
  const details = { jsonrpc_code: -32602, errors: [{ path: "/options/timeout_ms", message }] };
  throw new ProtocolError("PROTOCOL_ERROR", `Invalid params: timeoutMs: ${message}`, [], details);
}

/** Adds `routing_key` and `version` to the wire options, each when given (the server checks them). */
function addRollout(wire: Record<string, unknown>, options: InvokeOptions): void {
  if (options.routingKey !== undefined) wire.routing_key = options.routingKey;
  if (options.version !== undefined) wire.version = options.version;
}

/** Checks the constructor options and returns the endpoint. */
function endpointOf(options: ClientOptions): Endpoint {
  if (options.socket !== undefined && options.host === undefined && options.port === undefined) return { socket: options.socket };
  if (options.socket === undefined && options.port !== undefined) {
    return { host: options.host ?? "127.0.0.1", port: options.port, lookup: options.lookup };
  }
  throw new TypeError("Client needs either {socket} or {host, port}");
}

/** The TLS settings of `options.tls` (undefined without); a TypeError for a bad mix, PEM that does not load throws here. */
function secureContextOf(options: ClientOptions): tls.SecureContext | undefined {
  const given = options.tls;
  if (given === undefined) return undefined;
  if (options.socket !== undefined) throw new TypeError("Client: tls is for {host, port}, not a Unix socket");
  if ((given.cert === undefined) !== (given.key === undefined)) throw new TypeError("Client: tls.cert and tls.key go together");
  return tls.createSecureContext({ ca: given.ca, cert: given.cert, key: given.key, minVersion: "TLSv1.2" });
}

/**
 * Waits for `work`, but rejects with TIMEOUT at `ctl.giveUpAt` or CANCELLED when
 * `ctl.signal` aborts, calling `stop` first (which sends `$/cancel` for an invoke).
 */
function guard<T>(work: Promise<T>, ctl: Control, stop: () => void): Promise<T> {
  if (ctl.signal?.aborted) {
    stop();
    return Promise.reject(cancelledError(ctl.signal));
  }
  if (ctl.giveUpAt === undefined && ctl.signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      ctl.signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = (): void => {
      done();
      stop();
      reject(cancelledError(ctl.signal));
    };
    if (ctl.giveUpAt !== undefined) {
      timer = setTimeout(() => {
        done();
        stop();
        reject(timeoutError(ctl));
      }, Math.max(0, ctl.giveUpAt - Date.now()));
    }
    ctl.signal?.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (done(), reject(error)),
    );
  });
}

/** The client-side TIMEOUT, raised after `$/cancel` was sent. */
function timeoutError(ctl: Control): SkillTimeoutError {
  const what = ctl.timeoutMs === undefined ? "the call" : `the ${ctl.timeoutMs} ms deadline`;
  return new SkillTimeoutError("TIMEOUT", `no answer within ${what}; the client gave up (and sent $/cancel for an invocation)`, [], {
    client_side: true,
    timeout_ms: ctl.timeoutMs ?? null,
  });
}

/** The client-side CANCELLED of an aborted signal. */
function cancelledError(signal: AbortSignal | undefined): SkillCancelledError {
  const reason: unknown = signal?.reason;
  const why = reason instanceof Error ? reason.message : reason === undefined ? "" : String(reason);
  return new SkillCancelledError("CANCELLED", why ? `cancelled: ${why}` : "cancelled by the caller", [], { client_side: true });
}

/** Resolves after `ms`, or rejects with CANCELLED when the signal aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return guard(new Promise<void>((resolve) => setTimeout(resolve, ms)), { signal }, () => undefined);
}

/** Adds how many OVERLOADED retries were made to an OverloadedError's details. */
function withRetries(error: unknown, retries: number): unknown {
  if (error instanceof OverloadedError) error.details.retries = retries;
  return error;
}

/** Checks the shape of a `skills.invoke` result. */
function toInvokeResult<O>(result: unknown): InvokeResult<O> {
  if (!isObject(result) || !("output" in result)) {
    throw new ProtocolError("PROTOCOL_ERROR", "skills.invoke answered a result without output", [], { result });
  }
  return {
    skill: typeof result.skill === "string" ? result.skill : "",
    output: result.output as O,
    review: isObject(result.review) ? result.review : null,
    reviewPassed: isObject(result.review) ? result.review.pass !== false : null,
    attempts: Array.isArray(result.attempts) ? (result.attempts as Attempt[]) : [],
    metrics: isObject(result.metrics) ? result.metrics : {},
    skillVersion: typeof result.skill_version === "number" ? result.skill_version : null,
    arm: result.arm === "stable" || result.arm === "candidate" ? result.arm : null,
  };
}

/** The SCHEMA_CHANGED error for a skill the server no longer has as the caller expects. */
function schemaChanged(skill: string, expected: SkillStamp, actual: SkillStamp | undefined): SchemaChangedError {
  const details: Record<string, unknown> = { skill, expected: expected.schemaHash, actual: actual?.schemaHash ?? null };
  if (actual === undefined || expected.version === undefined) {
    const has = actual === undefined ? "no such skill" : actual.schemaHash;
    return new SchemaChangedError("SCHEMA_CHANGED", `skill "${skill}" changed on the server: generated against ${expected.schemaHash}, server has ${has}`, [], details);
  }
  details.expected_version = expected.version;
  details.actual_version = actual.version ?? null;
  return new SchemaChangedError(
    "SCHEMA_CHANGED",
    `skill "${skill}" changed on the server in a way that breaks this caller: generated against version ${expected.version} (${expected.schemaHash}), server has version ${actual.version ?? "none"} (${actual.schemaHash}); regenerate the stubs`,
    [],
    details,
  );
}

/** Throws ReviewFailedError when `result`'s review gate failed its answer; returns otherwise. */
export function raiseForReview(result: InvokeResult<unknown>): void {
  if (result.review === null || result.reviewPassed !== false) return;
  const issues = Array.isArray(result.review.issues) ? result.review.issues.filter((issue) => issue).map(String) : [];
  let message = `the review gate of skill ${result.skill} failed its answer`;
  if (issues.length > 0) message += `: ${issues.join("; ")}`;
  throw new ReviewFailedError(message, result.output, result.review, result.attempts);
}
