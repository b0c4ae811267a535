/**
 * Errors raised by the client: `SkillrunnerError` carries the error code (the
 * server's `data.code`, or a client-side code), the message, the attempts the
 * server made and details; one subclass per code lets callers `instanceof`.
 */
/** One attempt as the server reports it (design.md §6.1 "attempt"). */
export type Attempt = Record<string, unknown>;
/** Every error the client rejects with. */
export declare class SkillrunnerError extends Error {
    /** The code, e.g. "INPUT_INVALID", "TIMEOUT" or "CONNECTION_LOST". */
    readonly code: string;
    /** The attempts the server made before it gave up (empty when none). */
    readonly attempts: Attempt[];
    /**
     * `data.details` of the server's error, plus `errors` (the `{path, message}`
     * list of INPUT_INVALID and validation failures) and `retry_after_ms` where
     * present; client-side codes put their own fields here.
     */
    readonly details: Record<string, unknown>;
    /** Prefer `makeError`, which picks the subclass for the code. */
    constructor(code: string, message: string, attempts?: Attempt[], details?: Record<string, unknown>);
}
/** The input does not match the skill's input schema (`details.errors` has the pointers). */
export declare class InputInvalidError extends SkillrunnerError {
}
/** No skill with that id is loaded. */
export declare class SkillNotFoundError extends SkillrunnerError {
}
/** The answers stayed invalid after the retry budget. */
export declare class MaxRetriesExceededError extends SkillrunnerError {
}
/** The model stopped at its output limit. */
export declare class TruncatedError extends SkillrunnerError {
}
/** The model refused. */
export declare class RefusedError extends SkillrunnerError {
}
/** The provider's content filter stopped the answer. */
export declare class ContentFilteredError extends SkillrunnerError {
}
/** The provider answered a permanent error. */
export declare class ProviderError extends SkillrunnerError {
}
/** The provider stayed unavailable after the transient budget. */
export declare class ProviderUnavailableError extends SkillrunnerError {
}
/** The deadline passed (the server's, or the client's after it sent `$/cancel`). */
export declare class SkillTimeoutError extends SkillrunnerError {
}
/** A handler skill's program failed (`details.exit_status`, `details.stderr_tail`). */
export declare class HandlerFailedError extends SkillrunnerError {
}
/** A review skill's judge failed. */
export declare class JudgeError extends SkillrunnerError {
}
/** The call was cancelled (by an AbortSignal, or by the server while draining). */
export declare class SkillCancelledError extends SkillrunnerError {
}
/** The skill or the server's config did not load. */
export declare class ConfigInvalidError extends SkillrunnerError {
}
/** The server refused the call for load (`details.retry_after_ms`), after the client's retries. */
export declare class OverloadedError extends SkillrunnerError {
}
/** The listener needs a token, or the token is wrong. */
export declare class UnauthorizedError extends SkillrunnerError {
}
/** A tenant's budget is spent. */
export declare class BudgetExceededError extends SkillrunnerError {
}
/** The server failed in a way no other code fits (a file or database it could not use). */
export declare class InternalError extends SkillrunnerError {
}
/** Client-side: the connection dropped (or never opened) while the call was in flight; it is not re-sent. */
export declare class ConnectionLostError extends SkillrunnerError {
}
/** Client-side: the skill's schema hash on the server differs from the expected one. */
export declare class SchemaChangedError extends SkillrunnerError {
}
/** Client-side: a JSON-RPC protocol error (`details.jsonrpc_code`) or a malformed answer. */
export declare class ProtocolError extends SkillrunnerError {
}
/**
 * Client-side: the skill's review gate failed its answer, which the server returned all the same.
 * The generated stubs (and `raiseForReview`) reject with it unless called with
 * `allowReviewFailure: true`.
 */
export declare class ReviewFailedError extends SkillrunnerError {
    /** The answer the review failed. */
    readonly output: unknown;
    /** The review's verdict: `pass`, `issues`, `suggested_fixes`, `criteria_results`. */
    readonly review: Record<string, unknown>;
    constructor(message: string, output: unknown, review: Record<string, unknown>, attempts?: Attempt[]);
}
type ErrorClass = new (code: string, message: string, attempts?: Attempt[], details?: Record<string, unknown>) => SkillrunnerError;
/** The subclass for each code; an unknown code gets the base class. */
export declare const ERROR_CLASSES: Readonly<Record<string, ErrorClass>>;
/** Builds the error of the right subclass for a code. */
export declare function makeError(code: string, message: string, attempts?: Attempt[], details?: Record<string, unknown>): SkillrunnerError;
/** True for a plain JSON object (not null, not an array). */
export declare function isObject(v: unknown): v is Record<string, unknown>;
/**
 * Maps a JSON-RPC `error` member to a SkillrunnerError. The server's `data` is
 * the inner error object `{code, message, errors?, details?, attempts, metrics}`.
 */
export declare function errorFromJsonRpc(error: unknown): SkillrunnerError;
export {};
