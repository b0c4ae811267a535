/**
 * One socket to the server: writes request lines, splits the answers on
 * newlines and settles the pending call with the matching id. When the socket
 * closes, every pending call is rejected with CONNECTION_LOST (never re-sent).
 */
import * as net from "node:net";
import * as tls from "node:tls";
/** Where the server listens: a Unix socket path, or a TCP host and port. */
export type Endpoint = {
    socket: string;
} | {
    host: string;
    port: number;
    lookup?: net.LookupFunction;
};
/** A notification about one request (`skills.partial`, `skills.reset`); `params.id` names the request. */
export interface Notification {
    method: string;
    params: Record<string, unknown>;
}
/** A skill as `skills.list` and `skills.changed` describe it: what the schema checks compare. */
export interface SkillStamp {
    /** The skill's version; undefined when the server reports none. */
    version: number | undefined;
    /** Its `schema_hash`; "" when the server reports none. */
    schemaHash: string;
}
/** Maps a `skills.list` result to skill id -> stamp; undefined when it is not a list. */
export declare function stampsOf(list: unknown): Map<string, SkillStamp> | undefined;
/** Describes an endpoint for messages. */
export declare function describeEndpoint(endpoint: Endpoint): string;
/** A connected socket with its pending calls, keyed by JSON-RPC id. */
export declare class Connection {
    private readonly socket;
    private readonly where;
    private readonly pending;
    private readonly listeners;
    private buffer;
    private closedError;
    /** What the server said, in an answer without an id, before it closed (plain text on a TLS port). */
    private lastWords;
    /**
     * The last `skills.list` answered on this connection with every `skills.changed` after it
     * applied (kept as the lines arrive, so none is lost between the two); dropped with the connection.
     */
    skills: Map<string, SkillStamp> | undefined;
    /** The `skills.list` a schema check is waiting for, shared by concurrent checks. */
    listing: Promise<unknown> | undefined;
    private readonly listIds;
    private constructor();
    /**
     * Opens a connection; rejects with CONNECTION_LOST when the server cannot be reached. With
     * `secureContext` (a TCP endpoint) it speaks TLS: the handshake, in the connect timeout, must
     * verify the server's certificate and its name (`servername` for a host that is not an IP).
     */
    static open(endpoint: Endpoint, connectTimeoutMs: number, secureContext?: tls.SecureContext): Promise<Connection>;
    /** False once the socket has closed or failed. */
    get isOpen(): boolean;
    /** Number of calls waiting for an answer on this connection. */
    get inFlight(): number;
    /**
     * Writes one request line and returns its answer's `result` (or rejects with its error).
     * `listsSkills`: a `skills.list` whose answer becomes `skills`.
     */
    request(id: number, line: string, listsSkills?: boolean): Promise<unknown>;
    /** Stops waiting for an id (its answer, if it comes, is dropped) and writes `$/cancel` for it. */
    cancel(id: number): void;
    /** Hands the notifications whose `params.id` is `id` to `listener` until the id is forgotten. */
    listen(id: number, listener: (notification: Notification) => void): void;
    /** Stops waiting for an id without telling the server. */
    forget(id: number): void;
    /** Closes the socket; pending calls reject with CONNECTION_LOST. */
    close(reason?: string): void;
    /** The CONNECTION_LOST error for this connection. */
    private lostError;
    /** Rejects every pending call with `error` (the first failure wins). */
    private fail;
    /** Splits the received text into lines; the unfinished tail waits for the next chunk. */
    private onData;
    /** Settles the call an answer line belongs to; a line that is not JSON ends the connection. */
    private onLine;
    /** Resolves or rejects the pending call with the answer's id. */
    private settle;
    /** A `skills.changed` ({skill, version, schema_hash, breaking}): the kept `skills.list` follows it. */
    private applyChanged;
}
