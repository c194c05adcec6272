"""session_info.py claude|codex FILE -> shell assignments (FILE_SID, FILE_CWD, ...)."""
import json, sys, collections, shlex, re
agent, path = sys.argv[1], sys.argv[2]
sids = collections.Counter(); cwd = ""; meta = None
with open(path, encoding="utf-8", errors="replace") as f:
    for ln in f:
        try: o = json.loads(ln)
        except Exception: continue
        if not isinstance(o, dict): continue
        if agent == "claude":
            if o.get("sessionId") and o.get("type") in ("user", "assistant", "system"): sids[o["sessionId"]] += 1
            if o.get("cwd") and not cwd: cwd = o["cwd"]
        elif agent == "codex" and o.get("type") == "session_meta" and meta is None:
            meta = o
out = {}
if agent == "claude":
    out["FILE_SID"] = sids.most_common(1)[0][0] if sids else ""
    out["FILE_CWD"] = cwd
else:
    p = (meta or {}).get("payload", {})
    out["FILE_SID"] = p.get("id", "")
    out["FILE_CWD"] = p.get("cwd", "")
    out["FILE_TS"] = p.get("timestamp") or (meta or {}).get("timestamp", "")
for k, v in out.items(): print(f"{k}={shlex.quote(str(v))}")
