#!/usr/bin/env python3
"""The upstream the proxy and recording tests talk to: a plain http.server (HTTP/1.1, one thread per
connection). Prints `listening on http://127.0.0.1:PORT` when ready. Routes:
  /json /text /binary /gzip /empty(204) /missing(404) /search?q= /counter /big?size=N /chunked
  /secret /headers /slow /echo (POST, PUT: the request body back)
  /big-sha?size=N (with X-Content-SHA256) /chunked-big?size=N /held (first chunk, the rest after /release)
  /port (the connection's client port) /port-close (the same with Connection: close)
  /arm-drop (the next request on this connection is dropped: the connection closes unanswered)
  /drops (how many armed requests were dropped so far)"""
import hashlib
import gzip
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

COUNTER = {"n": 0}
DROPS = {"n": 0}
LOCK = threading.Lock()
HOLD = threading.Event()


def big_body(size):
    pattern = bytes((i * 7) % 251 for i in range(251))
    return (pattern * (size // 251 + 1))[:size]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", content_type=None, headers=()):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)

    def chunk(self, piece):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))

    def dropped(self):
        """True (and the connection closed unanswered) when /arm-drop armed this connection."""
        if getattr(self, "drop_next", False):
            self.close_connection = True
            with LOCK:
                DROPS["n"] += 1
            return True
        return False

    def do_GET(self):
        if self.dropped():
            return
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        if path == "/json":
            self.send(200, b'{"id":1,"name":"Ada","tags":["a","b"]}', "application/json", [("X-Request-Id", "r-1")])
        elif path == "/text":
            self.send(200, b"hello world\n", "text/plain; charset=utf-8")
        elif path == "/binary":
            self.send(200, bytes(range(256)) * 4, "application/octet-stream")
        elif path == "/gzip":
            body = json.dumps({"items": list(range(200))}, separators=(",", ":")).encode()
            self.send(200, gzip.compress(body), "application/json", [("Content-Encoding", "gzip")])
        elif path == "/empty":
            self.send(204)
        elif path == "/missing":
            self.send(404, b'{"error":"not here"}', "application/json")
        elif path == "/search":
            self.send(200, json.dumps({"q": query.get("q", [""])[0]}, separators=(",", ":")).encode(), "application/json")
        elif path == "/counter":
            with LOCK:
                COUNTER["n"] += 1
                n = COUNTER["n"]
            self.send(200, json.dumps({"count": n}, separators=(",", ":")).encode(), "application/json")
        elif path == "/big":
            self.send(200, big_body(int(query.get("size", ["1024"])[0])), "application/octet-stream")
        elif path == "/big-sha":
            body = big_body(int(query.get("size", ["1024"])[0]))
            self.send(200, body, "application/octet-stream", [("X-Content-SHA256", hashlib.sha256(body).hexdigest())])
        elif path == "/chunked-big":
            size = int(query.get("size", ["1024"])[0])
            body = big_body(size)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("X-Content-SHA256", hashlib.sha256(body).hexdigest())
            self.end_headers()
            for start in range(0, size, 100000):
                self.chunk(body[start:start + 100000])
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/held":
            HOLD.clear()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.chunk(b"first;")
            self.wfile.flush()
            HOLD.wait(30)
            self.chunk(b"second;")
            self.chunk(b"third")
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/release":
            HOLD.set()
            self.send(200, b"released", "text/plain")
        elif path == "/port":
            self.send(200, str(self.client_address[1]).encode(), "text/plain")
        elif path == "/port-close":
            self.close_connection = True
            self.send(200, str(self.client_address[1]).encode(), "text/plain", [("Connection", "close")])
        elif path == "/drops":
            with LOCK:
                count = DROPS["n"]
            self.send(200, str(count).encode(), "text/plain")
        elif path == "/arm-drop":
            self.drop_next = True
            self.send(200, str(self.client_address[1]).encode(), "text/plain")
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(50):
                piece = ("chunk %d;" % i).encode() * 100
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/secret":
            body = json.dumps({"ok": True, "token": "SECRET-TOKEN-VALUE", "user": {"token": "SECRET-NESTED"}},
                              separators=(",", ":")).encode()
            self.send(200, body, "application/json", [("Set-Cookie", "session=SECRET-COOKIE-VALUE; HttpOnly")])
        elif path == "/headers":
            seen = {k: v for k, v in self.headers.items()}
            self.send(200, json.dumps(seen, separators=(",", ":")).encode(), "application/json")
        elif path == "/slow":
            time.sleep(5)
            self.send(200, b"late", "text/plain")
        else:
            self.send(404, b"no route", "text/plain")

    def do_HEAD(self):
        self.do_GET()

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.dropped():
            return
        self.send(201 if self.command == "POST" else 200, body,
                  self.headers.get("Content-Type", "application/octet-stream"))

    do_PUT = do_POST


def main():
    # The test runner may start children with SIGTERM ignored or blocked: take it back.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    port = 0
    args = sys.argv[1:]
    if "--port" in args:
        port = int(args[args.index("--port") + 1])
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
