// Usage: node pi-context.mjs <session.jsonl> [--full]
// Opens a COPY of the pi session with pi's real SessionManager (which migrates
// v1/v2 files in place - hence the copy), builds the LLM context exactly like pi
// does (buildSessionContext + convertToLlm) and prints it as JSON.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const agents = process.env.MF_AGENTS_DIR || join(process.env.HOME || "", ".cache", "mf-agents");
const piDir = process.env.PI_PKG_DIR || join(agents, "node_modules", "@mariozechner", "pi-coding-agent");
const { SessionManager } = await import(join(piDir, "dist/core/session-manager.js"));
const { convertToLlm } = await import(join(piDir, "dist/core/messages.js"));

const args = process.argv.slice(2);
const full = args.includes("--full");
const src = args.find((a) => !a.startsWith("--"));
if (!src) { console.error("usage: pi-context.mjs <session.jsonl> [--full]"); process.exit(2); }
const tmp = mkdtempSync(join(tmpdir(), "mf-pi-"));
const copy = join(tmp, "session.jsonl");
copyFileSync(src, copy);
const clip = (s) => (full ? s : s.slice(0, 120));
try {
  const sm = SessionManager.open(copy, tmp);
  const ctx = sm.buildSessionContext();
  const out = [];
  for (const am of ctx.messages) {
    const conv = convertToLlm([am]);
    if (!conv.length) continue; // e.g. bashExecution with excludeFromContext
    const m = conv[0];
    const r = { i: out.length, role: m.role };
    if (am.role !== m.role) r.pi_role = am.role;
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content || [];
    const texts = [];
    const calls = [];
    for (const b of content) {
      if (b.type === "text") texts.push(b.text);
      else if (b.type === "thinking") r.thinking = true;
      else if (b.type === "toolCall") calls.push(b.id);
      else if (b.type === "image") texts.push("[image]");
    }
    const text = texts.join("\n");
    r.text = clip(text);
    r.len = text.length;
    if (calls.length) r.tool_calls = calls;
    if (m.role === "toolResult") r.tool_result_for = m.toolCallId;
    out.push(r);
  }
  // note: convertToLlm drops nothing but excluded bashExecution; agent_role shows pi's own role name
  const head = JSON.stringify({ agent: "pi", source: src, leafId: sm.getLeafId(), n: out.length });
  process.stdout.write(head.slice(0, -1) + ',"messages":[\n' + out.map((r) => JSON.stringify(r)).join(",\n") + "\n]}\n");
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
