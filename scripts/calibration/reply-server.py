#!/usr/bin/env python3
"""A loopback OpenAI-compatible server that answers every chat completion with one fixed reply.

Usage: reply-server.py REPLY_FILE PORT_FILE
Serves on 127.0.0.1 (a free port, written to PORT_FILE) until killed. Used by
scripts/calibrate.sh to serve a given summary as the summarizer's reply.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

reply = open(sys.argv[1], encoding="utf-8").read()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        prompt = self.rfile.read(n)
        body = json.dumps(
            {
                "id": "calibration",
                "object": "chat.completion",
                "model": "calibration",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt) // 4,
                    "completion_tokens": len(reply) // 4,
                },
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
