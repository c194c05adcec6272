#!/usr/bin/env python3
"""A loopback OpenAI-compatible summarizer for the benchmark: answers every Chat Completions
request after a fixed delay with a short summary, and counts the requests it answered.

usage: provider.py PORT_FILE COUNT_FILE [DELAY_SECONDS]
It binds 127.0.0.1 on a free port, writes the port to PORT_FILE, and appends one line to
COUNT_FILE per request answered.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, count_file = sys.argv[1], sys.argv[2]
delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.2
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        time.sleep(delay)
        body = json.dumps({
            "id": "bench",
            "object": "chat.completion",
            "model": "bench",
            "choices": [{
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": "The user asked about several orders; the assistant looked them up and reported their status.",
                },
            }],
            "usage": {"prompt_tokens": length // 4, "completion_tokens": 20},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with lock, open(count_file, "a") as f:
            f.write("1\n")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.replace(port_file + ".tmp", port_file)
server.serve_forever()
