#!/usr/bin/env python3
"""Instructions per request under callgrind: docs/performance.md's method, as a script.

A stripped copy of the server runs under `valgrind --tool=callgrind`, answers 5 warm-up requests, its counters are zeroed
(`callgrind_control -z`), it answers COUNT requests, and the counters are dumped (`callgrind_control -d`)
before it stops. The figure is that dump's instruction total divided by COUNT. Counts do not move with the
machine's load, so two builds can be compared on a busy machine.

  python3 Benchmarks/callgrind.py BINARY [--count 2000] [--rows keepalive,keepalive-log,connection,template,proxy,websocket,keepalive-store,keepalive-session]

Rows:
  keepalive      keep-alive literal hit (`GET /friends`, one connection), --quiet
  keepalive-log  the same at the default log level (the log written to /dev/null)
  connection     a new connection per request (`Connection: close`), --quiet
  template       a templated answer (`GET /users/7`, rendered per request), --quiet
  proxy          a proxied answer (a proxy stub to a second, uninstrumented mockserver), --quiet
  websocket      an x-websocket echo round trip (a 32-byte text message sent, `{{message.body}}` sent back, on
                 one upgraded connection, after 5,000 warm-up round trips that fill the message journal),
                 --quiet; not in the default rows
  keepalive-store  keepalive on a server started with --state-store over a local redis-server (issue 47:
                 serving a plain stub must not touch the store); not in the default rows
  keepalive-session  keepalive to the same stub with `X-Mock-Session: bench` (a server's stub asked in a
                 session, docs/scaling.md#sessions), --quiet; not in the default rows
Prints one line per row: `row instructions-per-request` (per round trip for websocket). Needs valgrind (Debian's `valgrind`).
"""

import argparse
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from bench import (WS_MESSAGE, free_port, spawn, stop_process, ws_client_frame, ws_open, ws_read_exact,
                   ws_server_frame)


def wait_for_port(port, process, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"port {port} did not open")


def read_response(sock, buffer):
    """Reads one response (Content-Length framed) from sock; returns the rest of the buffer."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before a head")
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed inside content")
        rest += chunk
    return rest[length:]


def keepalive_requests(port, request, count):
    with socket.create_connection(("127.0.0.1", port)) as sock:
        buffer = b""
        for _ in range(count):
            sock.sendall(request)
            buffer = read_response(sock, buffer)


def connection_requests(port, request, count):
    for _ in range(count):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(request)
            read_response(sock, b"")


def websocket_echoes(port, path, count):
    """Upgrades one connection to `path` and sends `count` text messages, each after the previous reply."""
    sock, buffer = ws_open(port, path)
    with sock:
        frame, reply = ws_client_frame(WS_MESSAGE), ws_server_frame(WS_MESSAGE)
        for _ in range(count):
            sock.sendall(frame)
            got, buffer = ws_read_exact(sock, buffer, len(reply))
            if got != reply:
                raise RuntimeError(f"the echo stub answered {got!r}")


def fixtures(folder, upstream_port):
    mappings = os.path.join(folder, "mappings")
    os.makedirs(mappings)
    stubs = [
        {"request": {"method": "GET", "urlPath": "/friends"},
         "response": {"status": 200, "jsonBody": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}]}},
        {"request": {"method": "GET", "urlPathTemplate": "/users/{id}"},
         "response": {"status": 200, "transformers": ["response-template"],
                      "jsonBody": {"id": "{{request.path.id}}", "name": "user {{request.path.id}}"}}},
        {"request": {"method": "GET", "urlPath": "/bench/ws/echo"},
         "response": {"x-websocket": {"messageMappings": [
             {"trigger": {"type": "message"},
              "actions": [{"type": "send", "message": {"body": "{{message.body}}"}}]}]}}},
    ]
    if upstream_port:
        stubs.append({"request": {"method": "GET", "urlPath": "/proxied"},
                      "response": {"proxyBaseUrl": f"http://127.0.0.1:{upstream_port}"}})
    with open(os.path.join(mappings, "stubs.json"), "w") as handle:
        json.dump({"mappings": stubs}, handle)
    upstream = os.path.join(folder, "upstream", "mappings")
    os.makedirs(upstream)
    with open(os.path.join(upstream, "stubs.json"), "w") as handle:
        json.dump({"mappings": [{"request": {"method": "GET", "urlPath": "/proxied"},
                                 "response": {"status": 200, "body": "from the upstream"}}]}, handle)


def measure(binary, folder, extra, request, count, drive, warm=5):
    port = free_port()
    out = os.path.join(folder, f"callgrind.{port}")
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "--host", "127.0.0.1",
               "--port", str(port), "--fixtures", folder, "--no-watch"] + extra
    process = spawn(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        drive(port, request, warm)
        subprocess.run(["callgrind_control", "-z", str(process.pid)], check=True, capture_output=True)
        drive(port, request, count)
        subprocess.run(["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True)
    finally:
        stop_process(process, timeout=120)
    dumps = sorted((p for p in glob.glob(out + ".*") if p.rsplit(".", 1)[1].isdigit()), key=os.path.getmtime)
    if not dumps:
        raise RuntimeError("no callgrind dump")
    with open(dumps[-1]) as handle:
        for line in handle:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1]) / count
    raise RuntimeError("no totals in the dump")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rows", default="keepalive,keepalive-log,connection,template,proxy")
    arguments = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("callgrind.py: valgrind is missing (apt-get install valgrind)")
    rows = arguments.rows.split(",")
    folder = tempfile.mkdtemp(prefix="callgrind-")
    upstream = None
    redis = None
    try:
        # Valgrind 3.19 cannot read the DWARF 5 the toolchain writes: a stripped copy is measured.
        stripped = os.path.join(folder, "mockserver")
        subprocess.run(["strip", "-o", stripped, arguments.binary], check=True)
        arguments.binary = stripped
        upstream_port = free_port() if "proxy" in rows else None
        fixtures(folder, upstream_port)
        if upstream_port:
            upstream = spawn(
                [arguments.binary, "--host", "127.0.0.1", "--port", str(upstream_port), "--fixtures",
                 os.path.join(folder, "upstream"), "--no-watch", "--quiet"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_port(upstream_port, upstream)
        store_url = None
        if "keepalive-store" in rows:
            # A plain stub on a server with --state-store (issue 47): serving must not touch the store.
            redis_port = free_port()
            redis = spawn(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no",
                           "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for_port(redis_port, redis)
            store_url = f"redis://127.0.0.1:{redis_port}"
        plain = b"GET /friends HTTP/1.1\r\nHost: localhost\r\n\r\n"
        cases = {
            "keepalive-store": (["--quiet", "--state-store", store_url or ""], plain, keepalive_requests),
            "keepalive": (["--quiet"], plain, keepalive_requests),
            "keepalive-session": (["--quiet"], b"GET /friends HTTP/1.1\r\nHost: localhost\r\nX-Mock-Session: bench\r\n\r\n",
                                  keepalive_requests),
            "keepalive-log": ([], plain, keepalive_requests),
            "connection": (["--quiet"], b"GET /friends HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                           connection_requests),
            "template": (["--quiet"], b"GET /users/7 HTTP/1.1\r\nHost: localhost\r\n\r\n", keepalive_requests),
            "proxy": (["--quiet"], b"GET /proxied HTTP/1.1\r\nHost: localhost\r\n\r\n", keepalive_requests),
            "websocket": (["--quiet"], "/bench/ws/echo", websocket_echoes),
        }
        for row in rows:
            extra, request, drive = cases[row]
            count = arguments.count if row != "proxy" else max(1, arguments.count // 4)
            # The websocket row's warm-up fills the message journal (10,000 messages received and sent), as on
            # a server that has been echoing for a while.
            warm = 5000 if row == "websocket" else 5
            value = measure(arguments.binary, folder, extra, request, count, drive, warm)
            print(f"{row} {value:.0f}", flush=True)
    finally:
        if upstream:
            stop_process(upstream)
        if redis:
            redis.kill()
            redis.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
