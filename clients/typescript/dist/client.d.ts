/**
 * The skillrunner client: one lazily opened connection (Unix socket or TCP)
 * that pipelines every call, deadlines that send `$/cancel`, AbortSignal
 * cancellation, OVERLOADED retried after the server's hint, and typed errors.
 */
import * as net from "node:net";
import { Notification } from "./connection";
import { Attempt } from "./errors";
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
/** A client for one server; safe to share: all calls pipeline over one connection. */
export declare class Client {
    private readonly endpoint;
    private readonly token;
    private readonly connectTimeoutMs;
    private readonly graceMs;
    private readonly maxOverloadedRetries;
    private readonly maxLineBytes;
    private readonly secureContext;
    private conn;
    private connecting;
    private nextId;
    private closed;
    /** Takes `{socket}` or `{host, port, token?, tls?}`; nothing is connected until the first call. */
    constructor(options: ClientOptions);
    /**
     * Invokes a skill and resolves with its result; rejects with a
     * SkillrunnerError subclass (InputInvalidError, SkillTimeoutError, ...).
     * OVERLOADED is retried after `retry_after_ms` while that fits the deadline
     * (without one: at most `maxOverloadedRetries` times).
     */
    invoke<O = unknown>(skill: string, input: unknown, options?: InvokeOptions): Promise<InvokeResult<O>>;
    /**
     * Invokes a skill with `"stream": true`: yields each StreamEvent as it
     * arrives, then the InvokeResult (tell them apart by `"method" in item`).
     * Errors reject as from `invoke` (no OVERLOADED retry: events may have been
     * shown). Leaving the loop early sends `$/cancel`.
     */
    stream<O = unknown>(skill: string, input: unknown, options?: StreamOptions): AsyncGenerator<StreamEvent | InvokeResult<O>, void, undefined>;
    /** The server's `health` answer (status, in_flight, connections, limits, ...). */
    health(options?: CallOptions): Promise<Record<string, unknown>>;
    /** `skills.list`: one summary per loaded skill (`id`, `version`, `schema_hash`, ...). */
    list(options?: CallOptions): Promise<Array<Record<string, unknown>>>;
    /** `skills.describe`: the summary plus `input_schema`, `output_schema`, rubric and descriptor. */
    describe(skill: string, options?: CallOptions): Promise<Record<string, unknown>>;
    /** `skills.reload`: swaps in a freshly loaded tree (or rejects, keeping the old one). */
    reload(options?: CallOptions): Promise<Record<string, unknown>>;
    /** Sends any JSON-RPC method (e.g. `metrics`) and resolves with its `result`. */
    call(method: string, params?: unknown, options?: CallOptions): Promise<unknown>;
    /** Closes the connection; in-flight calls reject with CONNECTION_LOST and later calls are refused. */
    close(): void;
    /** One `skills.invoke` request (after the schema check when asked for). */
    private invokeOnce;
    /** How long to wait before retrying an OVERLOADED call, or undefined to give up (any other error too). */
    private overloadedWait;
    /** The open connection, opening one when there is none (concurrent callers share the attempt). */
    private connection;
    /**
     * Compares the skill in `skills.list` (fetched once per connection, then kept up to date by
     * `skills.changed`) with what the caller was generated against: the same hash passes, and so
     * does another hash at the same version when `expected.version` is given (a compatible change;
     * the server refuses a breaking one unless the version rises). Anything else, or a missing skill,
     * rejects with SCHEMA_CHANGED. A server that reports no hash is not checked.
     */
    private checkSchema;
    /** Writes one request on `conn` and waits for its answer within `ctl`. */
    private send;
}
/** Throws ReviewFailedError when `result`'s review gate failed its answer; returns otherwise. */
export declare function raiseForReview(result: InvokeResult<unknown>): void;
