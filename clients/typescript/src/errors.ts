/**
 * Errors raised by the client: `SkillrunnerError` carries the error code (the
 * server's `data.code`, or a client-side code), the message, the attempts the
 * server made and details; one subclass per code lets callers `instanceof`.
 */

/** One attempt as the server reports it (design.md §6.1 "attempt"). */
export type Attempt = Record<string, unknown>;

/** Every error the client rejects with. */
export class SkillrunnerError extends Error {
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
  constructor(code: string, message: string, attempts: Attempt[] = [], details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.attempts = attempts;
    this.details = details;
  }
}

/** The input does not match the skill's input schema (`details.errors` has the pointers). */
export class InputInvalidError extends SkillrunnerError {}
/** No skill with that id is loaded. */
export class SkillNotFoundError extends SkillrunnerError {}
/** The answers stayed invalid after the retry budget. */
export class MaxRetriesExceededError extends SkillrunnerError {}
/** The model stopped at its output limit. */
export class TruncatedError extends SkillrunnerError {}
/** The model refused. */
export class RefusedError extends SkillrunnerError {}
/** The provider's content filter stopped the answer. */
export class ContentFilteredError extends SkillrunnerError {}
/** The provider answered a permanent error. */
export class ProviderError extends SkillrunnerError {}
/** The provider stayed unavailable after the transient budget. */
export class ProviderUnavailableError extends SkillrunnerError {}
/** The deadline passed (the server's, or the client's after it sent `$/cancel`). */
export class SkillTimeoutError extends SkillrunnerError {}
/** A handler skill's program failed (`details.exit_status`, `details.stderr_tail`). */
export class HandlerFailedError extends SkillrunnerError {}
/** A review skill's judge failed. */
export class JudgeError extends SkillrunnerError {}
/** The call was cancelled (by an AbortSignal, or by the server while draining). */
export class SkillCancelledError extends SkillrunnerError {}
/** The skill or the server's config did not load. */
export class ConfigInvalidError extends SkillrunnerError {}
/** The server refused the call for load (`details.retry_after_ms`), after the client's retries. */
export class OverloadedError extends SkillrunnerError {}
/** The listener needs a token, or the token is wrong. */
export class UnauthorizedError extends SkillrunnerError {}
/** A tenant's budget is spent. */
export class BudgetExceededError extends SkillrunnerError {}
/** The server failed in a way no other code fits (a file or database it could not use). */
export class InternalError extends SkillrunnerError {}
/** Client-side: the connection dropped (or never opened) while the call was in flight; it is not re-sent. */
export class ConnectionLostError extends SkillrunnerError {}
/** Client-side: the skill's schema hash on the server differs from the expected one. */
export class SchemaChangedError extends SkillrunnerError {}
/** Client-side: a JSON-RPC protocol error (`details.jsonrpc_code`) or a malformed answer. */
export class ProtocolError extends SkillrunnerError {}

/**
 * Client-side: the skill's review gate failed its answer, which the server returned all the same.
 * The generated stubs (and `raiseForReview`) reject with it unless called with
 * `allowReviewFailure: true`.
 */
export class ReviewFailedError extends SkillrunnerError {
  /** The answer the review failed. */
  readonly output: unknown;
  /** The review's verdict: `pass`, `issues`, `suggested_fixes`, `criteria_results`. */
  readonly review: Record<string, unknown>;

  constructor(message: string, output: unknown, review: Record<string, unknown>, attempts: Attempt[] = []) {
    super("REVIEW_FAILED", message, attempts);
    this.output = output;
    this.review = review;
  }
}

type ErrorClass = new (code: string, message: string, attempts?: Attempt[], details?: Record<string, unknown>) => SkillrunnerError;

/** The subclass for each code; an unknown code gets the base class. */
export const ERROR_CLASSES: Readonly<Record<string, ErrorClass>> = Object.freeze({
  INPUT_INVALID: InputInvalidError,
  SKILL_NOT_FOUND: SkillNotFoundError,
  MAX_RETRIES_EXCEEDED: MaxRetriesExceededError,
  TRUNCATED: TruncatedError,
  REFUSED: RefusedError,
  CONTENT_FILTERED: ContentFilteredError,
  PROVIDER_ERROR: ProviderError,
  PROVIDER_UNAVAILABLE: ProviderUnavailableError,
  TIMEOUT: SkillTimeoutError,
  HANDLER_FAILED: HandlerFailedError,
  JUDGE_ERROR: JudgeError,
  CANCELLED: SkillCancelledError,
  CONFIG_INVALID: ConfigInvalidError,
  OVERLOADED: OverloadedError,
  UNAUTHORIZED: UnauthorizedError,
  BUDGET_EXCEEDED: BudgetExceededError,
  INTERNAL: InternalError,
  CONNECTION_LOST: ConnectionLostError,
  SCHEMA_CHANGED: SchemaChangedError,
  PROTOCOL_ERROR: ProtocolError,
});

/** Builds the error of the right subclass for a code. */
export function makeError(
  code: string,
  message: string,
  attempts: Attempt[] = [],
  details: Record<string, unknown> = {},
): SkillrunnerError {
  const Cls = Object.prototype.hasOwnProperty.call(ERROR_CLASSES, code) ? ERROR_CLASSES[code] : undefined;
  return Cls ? new Cls(code, message, attempts, details) : new SkillrunnerError(code, message, attempts, details);
}

/** JSON-RPC codes that mean the request itself was wrong (parse, not a request, method, params). */
const PROTOCOL_CODES = new Set([-32700, -32600, -32601, -32602]);

/** The server-only JSON-RPC codes, for an error that lacks `data.code`. */
const SERVER_ONLY_CODES: Readonly<Record<number, string>> = { [-32000]: "OVERLOADED", [-32001]: "UNAUTHORIZED" };

/** True for a plain JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The members of an error's `data` that are not details. */
const ENVELOPE_KEYS = new Set(["code", "message", "details", "attempts", "metrics"]);

/**
 * Maps a JSON-RPC `error` member to a SkillrunnerError. The server's `data` is
 * the inner error object `{code, message, errors?, details?, attempts, metrics}`.
 */
export function errorFromJsonRpc(error: unknown): SkillrunnerError {
  if (!isObject(error) || typeof error.code !== "number") {
    return new ProtocolError("PROTOCOL_ERROR", "malformed JSON-RPC error member", [], { error });
  }
  const message = typeof error.message === "string" ? error.message : "unknown error";
  const data = isObject(error.data) ? error.data : {};
  const code = typeof data.code === "string" ? data.code : SERVER_ONLY_CODES[error.code];
  if (PROTOCOL_CODES.has(error.code) || code === undefined) {
    const details: Record<string, unknown> = { ...data, jsonrpc_code: error.code };
    return new ProtocolError("PROTOCOL_ERROR", message, [], details);
  }
  // data.details merged with the other members (errors, retry_after_ms, a refused reload's diagnostics), as the Python client does.
  const details: Record<string, unknown> = isObject(data.details) ? { ...data.details } : {};
  for (const [key, value] of Object.entries(data)) {
    if (!ENVELOPE_KEYS.has(key)) details[key] = value;
  }
  const attempts = Array.isArray(data.attempts) ? (data.attempts.filter(isObject) as Attempt[]) : [];
  const text = typeof data.message === "string" ? data.message : message;
  return makeError(code, text, attempts, details);
}
