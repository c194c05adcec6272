#!/usr/bin/env python3
"""A loopback proxy that forwards chat completions to a real model and keeps what it answered.

Usage: record-proxy.py UPSTREAM_BASE PORT_FILE OUT_DIR
Serves on 127.0.0.1 (a free port, written to PORT_FILE) until killed. Every POST is forwarded
to UPSTREAM_BASE + the same path (a loopback OpenAI-compatible server, e.g. the small model of
../shared/tools/local-llm.sh); the reply's message text is written to OUT_DIR/NNNN.txt and the
request body to OUT_DIR/NNNN.request.json, in the order the requests came. Used by
scripts/calibration/small-model.sh to keep the small model's summaries as calibration cases (d).
"""
import json
import os
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

upstream, port_file, out = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
if not upstream.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
    sys.exit("record-proxy: the upstream must be on loopback")
os.makedirs(out, exist_ok=True)
origin = upstream[: -len("/v1")] if upstream.endswith("/v1") else upstream  # mf posts /v1/chat/completions
lock = threading.Lock()
count = [0]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n)
        with lock:
            count[0] += 1
            k = count[0]
        req = urllib.request.Request(origin + self.path, data=body, headers={"content-type": "application/json"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=3600) as r:
                code, data = r.status, r.read()
        except urllib.error.HTTPError as e:
            code, data = e.code, e.read()
        os.makedirs(out, exist_ok=True)  # the caller empties it between cases
        open(os.path.join(out, f"{k:04d}.request.json"), "wb").write(body)
        try:
            text = json.loads(data)["choices"][0]["message"]["content"]
            open(os.path.join(out, f"{k:04d}.txt"), "w", encoding="utf-8").write(text)
        except (ValueError, KeyError, IndexError, TypeError):
            open(os.path.join(out, f"{k:04d}.error"), "wb").write(data)
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
