"""cmpctx.py A.json B.json [offsetA offsetB] - compare message lists from check-agents output; prints first diff."""
import json, sys
a = json.load(open(sys.argv[1]))["messages"]; b = json.load(open(sys.argv[2]))["messages"]
oa = int(sys.argv[3]) if len(sys.argv) > 3 else 0; ob = int(sys.argv[4]) if len(sys.argv) > 4 else 0
strip = lambda m: {k: v for k, v in m.items() if k != "i"}
A = [strip(m) for m in a[oa:]]; B = [strip(m) for m in b[ob:]]
if A == B: print(f"EQUAL ({len(A)} messages)"); sys.exit(0)
print(f"DIFFERENT lenA={len(A)} lenB={len(B)}")
for i, (x, y) in enumerate(zip(A, B)):
    if x != y: print("first diff at", i, "\n A:", x, "\n B:", y); break
sys.exit(1)
