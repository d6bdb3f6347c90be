#!/usr/bin/env python3
"""A small JSON API for the fixture-authoring loop test (AuthoringLoopTests): what a real provider looks like
to `mockserver record`, `verify` and Pact's verifier. Prints `listening on http://127.0.0.1:PORT` when
ready. Every answer carries volatile headers (a new X-Request-Id and ETag each time); nothing is stored, so
answers depend on the request alone.

Routes:
  GET    /api/items?page=N&per_page=M   a page of items, with `next` and a Link header
  GET    /api/items/{id}                 an item (1-5), else 404 problem JSON
  POST   /api/items                      201, Location /api/items/<new id>, a new id and createdAt
  PUT    /api/items/{id}                 200, the item with the body's fields
  DELETE /api/items/{id}                 204
  GET    /api/search?q=                  the items whose name contains q
  GET    /api/me                         200 with `Authorization: Bearer <anything>` (and a new session
                                         cookie), else 401 with WWW-Authenticate
  GET    /api/stats                      JSON, gzip-compressed when the client accepts it
  GET    /api/avatar.png                 a PNG image
  GET    /api/notes.txt                  text/plain
  GET    /api/feed.xml                   application/xml
  GET    /api/slow                       JSON after a second
  GET    /__seen                         the methods and paths received so far (`?clear=1` forgets them)

--drift NAME,... changes the API: `rename` (items' `name` becomes `title`), `status` (/api/notes.txt answers
410), `add` (items gain a `currency` field)."""
import argparse
import gzip
import json
import os
import secrets
import signal
import struct
import sys
import threading
import time
import uuid
import zlib
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ITEMS = [
    {"id": 1, "name": "Widget", "price": 9.5, "tags": ["tools"]},
    {"id": 2, "name": "Gadget", "price": 12.0, "tags": ["tools", "new"]},
    {"id": 3, "name": "Sprocket", "price": 3.25, "tags": []},
    {"id": 4, "name": "Gizmo", "price": 20.0, "tags": ["new"]},
    {"id": 5, "name": "Doohickey", "price": 1.0, "tags": ["sale"]},
]
DRIFT = set()
SEEN = []
LOCK = threading.Lock()


def png_bytes():
    """A valid 4x4 RGB PNG."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + b"".join(bytes((x * 60, y * 60, 128)) for x in range(4)) for y in range(4))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PNG = png_bytes()


def item(data):
    out = dict(data)
    if "rename" in DRIFT:
        out["title"] = out.pop("name")
    if "add" in DRIFT:
        out["currency"] = "EUR"
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", content_type=None, headers=()):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("X-Request-Id", str(uuid.uuid4()))
        self.send_header("ETag", '"%s"' % secrets.token_hex(8))
        for name, value in headers:
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)

    def json(self, status, value, headers=()):
        self.send(status, json.dumps(value, separators=(",", ":")).encode(), "application/json", headers)

    def problem(self, status, title):
        self.send(status, json.dumps({"title": title, "status": status}).encode(), "application/problem+json")

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def route(self):
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        if path != "/__seen":
            with LOCK:
                SEEN.append("%s %s" % (self.command, path))
        return path, query

    def item_id(self, path):
        try:
            return int(path.rsplit("/", 1)[1])
        except ValueError:
            return None

    def do_GET(self):
        path, query = self.route()
        if path == "/__seen":
            with LOCK:
                seen = list(SEEN)
                if query.get("clear"):
                    SEEN.clear()
            self.json(200, seen)
        elif path == "/api/items":
            page = int(query.get("page", ["1"])[0])
            per = int(query.get("per_page", ["2"])[0])
            chunk = ITEMS[(page - 1) * per:page * per]
            body = {"items": [item(i) for i in chunk], "page": page, "total": len(ITEMS)}
            headers = []
            if page * per < len(ITEMS):
                body["next"] = "/api/items?page=%d&per_page=%d" % (page + 1, per)
                headers.append(("Link", '</api/items?page=%d&per_page=%d>; rel="next"' % (page + 1, per)))
            self.json(200, body, headers)
        elif path.startswith("/api/items/"):
            found = [i for i in ITEMS if i["id"] == self.item_id(path)]
            if found:
                self.json(200, item(found[0]))
            else:
                self.problem(404, "no such item")
        elif path == "/api/search":
            q = query.get("q", [""])[0].lower()
            self.json(200, {"results": [item(i) for i in ITEMS if q in i["name"].lower()]})
        elif path == "/api/me":
            auth = self.headers.get("Authorization") or ""
            if auth.startswith("Bearer ") and len(auth) > 7:
                session = secrets.token_urlsafe(18)
                self.json(200, {"user": "ada", "roles": ["admin"]},
                          [("Set-Cookie", "session=%s; HttpOnly; Path=/" % session)])
            else:
                self.send(401, b'{"error":"unauthorized"}', "application/json",
                          [("WWW-Authenticate", 'Bearer realm="api"')])
        elif path == "/api/stats":
            body = json.dumps({"counts": list(range(300)), "ok": True}, separators=(",", ":")).encode()
            if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                self.send(200, gzip.compress(body), "application/json", [("Content-Encoding", "gzip")])
            else:
                self.send(200, body, "application/json")
        elif path == "/api/avatar.png":
            self.send(200, PNG, "image/png", [("Cache-Control", "max-age=60")])
        elif path == "/api/notes.txt":
            if "status" in DRIFT:
                self.send(410, b"gone\n", "text/plain; charset=utf-8")
            else:
                self.send(200, b"release notes\nline two\n", "text/plain; charset=utf-8")
        elif path == "/api/feed.xml":
            self.send(200, b'<?xml version="1.0"?><feed><entry id="1">Widget</entry></feed>', "application/xml")
        elif path == "/api/slow":
            time.sleep(1)
            self.json(200, {"slow": True})
        else:
            self.problem(404, "no route")

    def do_POST(self):
        path, _ = self.route()
        data = json.loads(self.body() or b"{}")
        if path == "/api/items":
            new_id = secrets.randbelow(10**6) + 100
            created = dict(data, id=new_id, createdAt=datetime.now(timezone.utc).isoformat())
            self.json(201, item(created), [("Location", "/api/items/%d" % new_id)])
        else:
            self.problem(404, "no route")

    def do_PUT(self):
        path, _ = self.route()
        data = json.loads(self.body() or b"{}")
        if path.startswith("/api/items/") and self.item_id(path) is not None:
            self.json(200, item(dict(data, id=self.item_id(path))))
        else:
            self.problem(404, "no route")

    def do_DELETE(self):
        path, _ = self.route()
        if path.startswith("/api/items/"):
            self.send(204)
        else:
            self.problem(404, "no route")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--drift", default="")
    args = parser.parse_args()
    DRIFT.update(name for name in args.drift.split(",") if name)
    # The test process may have SIGTERM blocked (its servers take signals through signalfd), and a child
    # inherits the mask: end at once on SIGTERM and SIGINT.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print("listening on http://127.0.0.1:%d" % server.server_address[1], flush=True)
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
