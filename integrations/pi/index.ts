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
 * Recall on demand: two tools the model can call, on the current session's file,
 *   mf_search {query, limit?, all?}  `mf search FILE QUERY --limit N [--all]`: the entries no
 *                              longer in the model's context (folded by mf or compacted by pi;
 *                              with all, every entry) that match, ranked, each with its id
 *   mf_expand {id}             `mf expand FILE ID --format text`: the originals behind a summary
 *                              or stub id, or the entry with that id, verbatim
 * Their result is mf's stdout; mf's failure (exit >= 2, or mf missing) is an error result with
 * mf's message; `mf search` finding nothing (exit 1) is a plain result saying so.
 *
 * Configuration (environment of the pi process):
 *   MF_MODEL      the summarizer model mf uses (else mf's config file; mf never defaults one)
 *   MF_BIN        the mf executable (default: `mf` on PATH)
 *   PI_MF_ARGS    extra arguments for `mf summarize`, split on spaces (e.g. `--min-retention 0.6`)
 *   PI_MF_TIMEOUT seconds mf may take before pi's own compaction is used instead (default 300;
 *                 also the limit of one mf_search / mf_expand call)
 *   PI_MF_MAX_CHARS  the most characters an mf_search / mf_expand result gives the model (default
 *                 60000; a longer one is cut, and says how to read the rest)
 */

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

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

/** A tool's text result, cut to `max` characters (with a line saying how to read all of it). */
export function cut(text: string, max: number, whole: string): string {
	if (text.length <= max) return text;
	return `${text.slice(0, max)}\n… cut at ${max} of ${text.length} characters; all of it: ${whole}`;
}

/** A shell-quoted word, for the commands the tools name in their results. */
function quote(s: string): string {
	return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

type ToolResult = { content: { type: "text"; text: string }[]; details: Record<string, unknown>; isError?: boolean };

/**
 * Run `mf ARGS` for a tool: stdout as the result (with mf's notes on stderr after it); an error
 * result with mf's message when mf fails, is missing, or (exit 1) when `noHits` is not given.
 */
async function mfTool(
	args: string[],
	signal: AbortSignal | undefined,
	noHits?: (stderr: string) => string,
): Promise<ToolResult> {
	const bin = process.env.MF_BIN || "mf";
	const timeoutMs = 1000 * (Number(process.env.PI_MF_TIMEOUT) || 300);
	const max = Number(process.env.PI_MF_MAX_CHARS) || 60000;
	const command = [bin, ...args].map(quote).join(" ");
	const run = await runMf(bin, args, "", signal, timeoutMs);
	const details = { command, exitCode: run.code };
	const text = (t: string, isError = false): ToolResult => ({
		content: [{ type: "text", text: t }],
		details,
		...(isError ? { isError: true } : {}),
	});
	if (run.error || run.code === null) {
		const why = run.error ? run.error.message : "it was stopped (timeout or abort)";
		return text(`mf did not run (${bin}: ${why})`, true);
	}
	const notes = run.stderr.trim();
	if (run.code === 0) {
		const out = run.stdout.trimEnd() + (notes ? `\n\n(mf: ${notes})` : "");
		return text(cut(out, max, command));
	}
	if (run.code === 1 && noHits) return text(noHits(notes));
	return text(`${command} failed (exit ${run.code}): ${mfError(run.stderr) || run.stdout.trim() || "no message"}`, true);
}

/** The current session's file, or an error result saying there is none. */
function sessionFile(ctx: { sessionManager: { getSessionFile(): string | undefined } }): string | ToolResult {
	const file = ctx.sessionManager.getSessionFile();
	if (file) return file;
	return {
		content: [{ type: "text", text: "this pi session is not saved to a file (--no-session), so mf has nothing to search" }],
		details: {},
		isError: true,
	};
}

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "mf_search",
		label: "mf search",
		description:
			"Search the earlier turns of this session that are no longer in your context (folded into a summary by mf, " +
			"or compacted by pi) for a query; identifiers, paths, numbers and \"quoted phrases\" match exactly, other " +
			"words are ranked. Each hit names its entry id, turn and role and quotes the matching lines; pass an id to " +
			"mf_expand for the whole original.",
		promptSnippet: "Search this session's folded/compacted earlier turns (ids for mf_expand)",
		promptGuidelines: [
			"Use mf_search when a detail you need (a name, number, path, decision) was in an earlier turn that a summary now stands for, instead of guessing it.",
			"Use mf_expand with an id from mf_search, or with a summary's id, to read those earlier messages verbatim.",
		],
		parameters: Type.Object({
			query: Type.String({ description: "What to look for: words, identifiers, paths, numbers, \"quoted phrases\"" }),
			limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "How many hits at most (default 5)" })),
			all: Type.Optional(
				Type.Boolean({ description: "Search every entry of the session, not only those no longer in your context" }),
			),
		}),
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const file = sessionFile(ctx);
			if (typeof file !== "string") return file;
			const args = ["search", file, params.query, "--limit", String(params.limit ?? 5)];
			if (params.all) args.push("--all");
			return mfTool(args, signal, (notes) => {
				const said = notes.replace(/^mf: /, "").replace(/\s*\(--all searches every entry\)/, "");
				return (
					`no hit for ${JSON.stringify(params.query)}` +
					(said ? `: ${said}` : "") +
					(params.all ? "" : "; mf_search with all: true searches every entry")
				);
			});
		},
	});

	pi.registerTool({
		name: "mf_expand",
		label: "mf expand",
		description:
			"The original messages behind an mf summary or stub id (e.g. \"msg-summary-1-7\", named in the summary's " +
			"first line), or the one entry with an id mf_search gave, verbatim as readable text.",
		parameters: Type.Object({
			id: Type.String({ description: "A summary/stub id, or an entry id from mf_search" }),
		}),
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const file = sessionFile(ctx);
			if (typeof file !== "string") return file;
			return mfTool(["expand", file, params.id, "--format", "text"], signal);
		},
	});

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
		if (run.code === 1 && result) {
			tell(`mf declined this compaction: ${reason}; pi's own compaction is used`, "warning");
		} else {
			tell(`mf could not summarize (exit ${run.code}): ${reason}; pi's own compaction is used`, "error");
		}
		return;
	});
}
