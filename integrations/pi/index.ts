/**
 * mf as pi's compactor.
 *
 * On `session_before_compact` (manual `/compact`, RPC `compact`, and automatic compaction), this
 * extension hands the entries pi is about to summarize to `mf summarize --json` as a pi session
 * on stdin, and returns mf's audited summary (mf's label first, its salient-items section, the
 * audit in `details.mf`) as pi's compaction. When mf declines the summary (its audit found it
 * lost too much), fails, or is not installed, the extension returns nothing, so pi's own
 * compaction goes ahead, and says why in pi's UI.
 *
 * Configuration (environment of the pi process):
 *   MF_MODEL      the summarizer model mf uses (else mf's config file; mf never defaults one)
 *   MF_BIN        the mf executable (default: `mf` on PATH)
 *   PI_MF_ARGS    extra arguments for `mf summarize`, split on spaces (e.g. `--min-retention 0.6`)
 *   PI_MF_TIMEOUT seconds mf may take before pi's own compaction is used instead (default 300)
 */

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

/** What `mf summarize --json` prints. */
interface MfResult {
	summary: string | null;
	model?: string;
	strategy?: string;
	audit?: Record<string, unknown>;
	usage?: Record<string, unknown>;
	costUsd?: number | null;
	accepted: boolean;
	reason?: string | null;
}

interface Run {
	code: number | null;
	stdout: string;
	stderr: string;
	error?: Error;
}

type Message = { role?: string; timestamp?: number; [k: string]: unknown };

/** An 8-hex id, as pi gives its entries. */
function hex8(): string {
	return randomUUID().replace(/-/g, "").slice(0, 8);
}

function iso(ms: unknown): string {
	return new Date(typeof ms === "number" && Number.isFinite(ms) ? ms : Date.now()).toISOString();
}

/**
 * The span as a pi session file: a header, pi's previous summary (as the compaction entry pi
 * wrote it), then one message entry per message, each the child of the one before.
 */
export function sessionJsonl(messages: Message[], cwd: string, previousSummary?: string): string {
	const lines: string[] = [];
	lines.push(
		JSON.stringify({ type: "session", version: 3, id: randomUUID(), timestamp: new Date().toISOString(), cwd }),
	);
	let parent: string | null = null;
	const ids = messages.map(() => hex8());
	if (previousSummary && previousSummary.trim()) {
		const id = hex8();
		lines.push(
			JSON.stringify({
				type: "compaction",
				id,
				parentId: parent,
				timestamp: new Date().toISOString(),
				summary: previousSummary,
				firstKeptEntryId: ids[0] ?? id,
				tokensBefore: 0,
			}),
		);
		parent = id;
	}
	messages.forEach((message, k) => {
		lines.push(
			JSON.stringify({ type: "message", id: ids[k], parentId: parent, timestamp: iso(message.timestamp), message }),
		);
		parent = ids[k];
	});
	return lines.join("\n") + "\n";
}

/** Run mf with `input` on stdin. */
function runMf(bin: string, args: string[], input: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<Run> {
	return new Promise((resolve) => {
		let child;
		try {
			child = spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"], signal, timeout: timeoutMs });
		} catch (error) {
			resolve({ code: null, stdout: "", stderr: "", error: error as Error });
			return;
		}
		let stdout = "";
		let stderr = "";
		let failed: Error | undefined;
		child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
		child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
		child.on("error", (error: Error) => (failed = error));
		child.on("close", (code: number | null) => resolve({ code, stdout, stderr, error: failed }));
		child.stdin.on("error", () => {});
		child.stdin.end(input);
	});
}

/** pi's file lists (what it records in a compaction's `details`), from `preparation.fileOps`. */
function fileLists(fileOps: unknown): { readFiles: string[]; modifiedFiles: string[] } | undefined {
	const ops = fileOps as { read?: Set<string>; written?: Set<string>; edited?: Set<string> } | undefined;
	if (!ops?.read) return undefined;
	const modified = new Set([...(ops.edited ?? []), ...(ops.written ?? [])]);
	return {
		readFiles: [...ops.read].filter((f) => !modified.has(f)).sort(),
		modifiedFiles: [...modified].sort(),
	};
}

/** What mf's stderr says went wrong: its `error:` line (and the first hint), else its last line. */
function mfError(s: string): string {
	const lines = s.trim().split("\n").filter((l) => l.trim());
	const error = lines.find((l) => l.startsWith("error: "));
	if (!error) return lines[lines.length - 1] ?? "";
	const hint = lines.find((l) => l.startsWith("hint: "));
	return error.replace(/^error: /, "") + (hint ? ` (${hint})` : "");
}

export default function (pi: ExtensionAPI) {
	pi.on("session_before_compact", async (event, ctx) => {
		const { preparation, signal } = event;
		const messages = [
			...((preparation.messagesToSummarize ?? []) as Message[]),
			...((preparation.turnPrefixMessages ?? []) as Message[]),
		].filter((m) => m && m.role !== "system");
		if (messages.length === 0) return;
		const bin = process.env.MF_BIN || "mf";
		const args = ["summarize", "-", "--json"];
		if (process.env.MF_MODEL) args.push("--model", process.env.MF_MODEL);
		if (process.env.PI_MF_ARGS) args.push(...process.env.PI_MF_ARGS.split(" ").filter(Boolean));
		const timeoutMs = 1000 * (Number(process.env.PI_MF_TIMEOUT) || 300);
		const input = sessionJsonl(messages, ctx.cwd ?? process.cwd(), preparation.previousSummary);
		const tell = (text: string, level: "info" | "warning" | "error") => {
			try {
				ctx.ui.notify(text, level);
			} catch {
				// No UI (print mode): nothing to tell.
			}
		};

		const run = await runMf(bin, args, input, signal, timeoutMs);
		if (signal?.aborted) return;
		if (run.error || run.code === null) {
			const why = run.error ? run.error.message : "it was stopped (timeout)";
			tell(`mf did not run (${bin}: ${why}); pi's own compaction is used`, "error");
			return;
		}
		let result: MfResult | undefined;
		try {
			result = JSON.parse(run.stdout) as MfResult;
		} catch {
			result = undefined;
		}
		if (run.code === 0 && result?.accepted && result.summary) {
			return {
				compaction: {
					summary: result.summary,
					firstKeptEntryId: preparation.firstKeptEntryId,
					tokensBefore: preparation.tokensBefore,
					details: {
						...(fileLists(preparation.fileOps) ?? {}),
						mf: {
							model: result.model,
							strategy: result.strategy,
							audit: result.audit,
							usage: result.usage,
							costUsd: result.costUsd,
						},
					},
				},
			};
		}
		const reason =
			result?.reason ||
			mfError(run.stderr) ||
			`mf exited with ${run.code}`;
		if (run.code === 1) {
			tell(`mf declined this compaction: ${reason}; pi's own compaction is used`, "warning");
		} else {
			tell(`mf could not summarize (exit ${run.code}): ${reason}; pi's own compaction is used`, "error");
		}
		return;
	});
}
