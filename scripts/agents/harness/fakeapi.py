#!/usr/bin/env python3
"""Loopback fake LLM API server (127.0.0.1 only) that RECORDS every request.

  python3 fakeapi.py --record DIR [--port 0] [--portfile F] [--reply TEXT]

Anthropic Messages API:  POST /v1/messages[?beta=true]  -> SSE stream (or JSON if stream is false)
                         POST /v1/messages/count_tokens -> {"input_tokens": N}
OpenAI Responses API:    GET  /v1/responses (websocket upgrade) -> 426 Upgrade Required
                         POST /v1/responses -> SSE (response.created ... response.completed)
                         GET  /v1/models -> small model list
Anything else: 200 {} (GET/POST/PUT...).
Each request is saved as DIR/NNNN-<method>-<path>.json = {"method","path","headers","body"}.
"""
import argparse, json, os, sys, threading, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--record", required=True)
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--portfile")
ap.add_argument("--reply", default="OK-from-fake-model")
ap.add_argument("--delay", type=float, default=0, help="sleep before answering model requests")
ap.add_argument("--max-seconds", type=float, default=600, help="exit by itself after this long")
A = ap.parse_args()
os.makedirs(A.record, exist_ok=True)
lock = threading.Lock()
counter = [0]

def record(h, body_bytes):
    with lock:
        counter[0] += 1
        n = counter[0]
    try:
        body = json.loads(body_bytes) if body_bytes else None
    except Exception:
        body = {"_raw": body_bytes.decode("utf-8", "replace")[:100000]}
    safe = h.path.split("?")[0].strip("/").replace("/", "_") or "root"
    with open(os.path.join(A.record, f"{n:04d}-{h.command}-{safe}.json"), "w") as f:
        json.dump({"method": h.command, "path": h.path, "headers": dict(h.headers), "body": body}, f)
    return body

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline(); break
                out += self.rfile.read(size); self.rfile.readline()
            return out
        return b""
    def _json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers(); self.wfile.write(b)
    def _sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for ev, data in events:
            self.wfile.write(f"event: {ev}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        p = self.path.split("?")[0]
        record(self, b"")
        if p.endswith("/responses"):
            return self._json(426, {"error": "websocket not supported here"})
        if p.endswith("/models"):
            return self._json(200, {"object": "list", "data": [
                {"id": "gpt-5.5", "object": "model"}, {"id": "claude-sonnet-4-5", "type": "model", "display_name": "x"}],
                "models": []})
        return self._json(200, {})
    def do_PUT(self): self.do_POST()
    def do_PATCH(self): self.do_POST()
    def do_DELETE(self): self.do_POST()
    def do_HEAD(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()

    def do_POST(self):
        raw = self._body()
        p = self.path.split("?")[0]
        body = record(self, raw)
        if p.endswith("/messages/count_tokens"):
            return self._json(200, {"input_tokens": 1000})
        if A.delay and (p.endswith("/v1/messages") or p.endswith("/responses")):
            time.sleep(A.delay)
        if p.endswith("/v1/messages"):
            return self.anthropic(body or {})
        if p.endswith("/responses"):
            return self.openai(body or {})
        if p.endswith("/chat/completions"):
            return self._json(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
                "model": (body or {}).get("model", "x"), "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": A.reply}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        return self._json(200, {})

    def anthropic(self, body):
        model = body.get("model", "claude-sonnet-4-5")
        mid = "msg_fake" + uuid.uuid4().hex[:20]
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        msg = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            msg = dict(msg, content=[{"type": "text", "text": A.reply}], stop_reason="end_turn")
            return self._json(200, msg)
        self._sse([
            ("message_start", {"type": "message_start", "message": msg}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ("ping", {"type": "ping"}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": A.reply}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    def openai(self, body):
        rid = "resp_" + uuid.uuid4().hex
        iid = "msg_" + uuid.uuid4().hex
        model = body.get("model", "gpt-5.5")
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model, "status": "in_progress", "output": []}
        item = {"type": "message", "id": iid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": A.reply, "annotations": []}]}
        done = dict(base, status="completed", output=[item],
                    usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                           "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15})
        self._sse([
            ("response.created", {"type": "response.created", "sequence_number": 0, "response": base}),
            ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                "item": dict(item, status="in_progress", content=[])}),
            ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 2, "item_id": iid,
                "output_index": 0, "content_index": 0, "delta": A.reply}),
            ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "sequence_number": 4, "response": done}),
        ])

class Srv(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients closing keep-alive sockets is normal here

srv = Srv(("127.0.0.1", A.port), H)
srv.daemon_threads = True
if A.portfile:
    tmp = A.portfile + ".tmp"
    open(tmp, "w").write(str(srv.server_address[1])); os.replace(tmp, A.portfile)
_t = threading.Timer(A.max_seconds, lambda: os._exit(0)); _t.daemon = True; _t.start()
try:
    srv.serve_forever()
except KeyboardInterrupt:
    pass
