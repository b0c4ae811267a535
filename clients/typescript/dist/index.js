"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __exportStar = (this && this.__exportStar) || function(m, exports) {
    for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p)) __createBinding(exports, m, p);
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.raiseForReview = exports.Client = void 0;
/**
 * skillrunner-client: call skills on a `skillrunner serve` from Node 18+.
 *
 *     import { Client, InputInvalidError } from "skillrunner-client";
 *     const client = new Client({ socket: "/run/skillrunner.sock" });
 *     const result = await client.invoke<{ priority: number }>("triage_ticket", { subject: "..." }, { timeoutMs: 5000 });
 */
var client_1 = require("./client");
Object.defineProperty(exports, "Client", { enumerable: true, get: function () { return client_1.Client; } });
Object.defineProperty(exports, "raiseForReview", { enumerable: true, get: function () { return client_1.raiseForReview; } });
__exportStar(require("./errors"), exports);
