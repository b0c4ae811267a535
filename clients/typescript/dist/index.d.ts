/**
 * skillrunner-client: call skills on a `skillrunner serve` from Node 18+.
 *
 *     import { Client, InputInvalidError } from "skillrunner-client";
 *     const client = new Client({ socket: "/run/skillrunner.sock" });
 *     const result = await client.invoke<{ priority: number }>("triage_ticket", { subject: "..." }, { timeoutMs: 5000 });
 */
export { Client, raiseForReview } from "./client";
export type { CallOptions, ClientOptions, InvokeOptions, InvokeResult, StreamEvent, StreamOptions, TlsOptions } from "./client";
export type { Endpoint, Notification } from "./connection";
export * from "./errors";
