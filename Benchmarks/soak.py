#!/usr/bin/env python3
"""Soak test: one mockserver, mixed traffic for SOAK_SECONDS (default 600), then a report.

Run through `make soak` (docs/performance.md). Standard library only; loopback only. Traffic, all at once:
keep-alive clients, a new connection per request, pipelined batches, slow readers and never-readers of a
large body, admin reads, hot reloads of a fixture file, delayed stubs and faulted stubs (reset, empty
response). At the end it prints requests served, errors (answers other than the expected ones), RSS and
open descriptors of the server at the start and at the end (after the clients closed), and exits 1 when
something was lost: an error, descriptors not back to the start, or RSS above the bound.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HOST = "127.0.0.1"
BIG = 256 * 1024


def stub(url, body="ok", extra=None, method="GET"):
    response = {"status": 200, "body": body}
    response.update(extra or {})
    return {"request": {"method": method, "url": url}, "response": response}


def write_fixtures(root, reload_value):
    os.makedirs(os.path.join(root, "mappings"), exist_ok=True)
    stubs = {
        "ka.json": stub("/ka", "keep-alive"),
        "delay.json": stub("/delay", "delayed", {"fixedDelayMilliseconds": 50}),
        "random.json": stub(
            "/random", "random", {"delayDistribution": {"type": "uniform", "lower": 1, "upper": 30}}),
        "reset.json": {"request": {"method": "GET", "url": "/reset"},
                       "response": {"fault": "CONNECTION_RESET_BY_PEER"}},
        "empty.json": {"request": {"method": "GET", "url": "/empty"}, "response": {"fault": "EMPTY_RESPONSE"}},
        "big.json": stub("/big", "b" * BIG),
    }
    for name, value in stubs.items():
        with open(os.path.join(root, "mappings", name), "w") as f:
            json.dump(value, f)
    write_reload(root, reload_value)


def write_reload(root, value):
    path = os.path.join(root, "mappings", "reload.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(stub("/reload", "v%d" % value), f)
    os.replace(tmp, path)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.errors = {}

    def ok(self, kind, n=1):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + n

    def error(self, kind, what):
        with self.lock:
            key = "%s: %s" % (kind, what)
            self.errors[key] = self.errors.get(key, 0) + 1


def connect(port, timeout=10):
    s = socket.create_connection((HOST, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def request(path, close=False):
    extra = "Connection: close\r\n" if close else ""
    return ("GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n" % (path, extra)).encode()


class Reader:
    """Reads Content-Length framed responses from a socket."""

    def __init__(self, sock, chunk=65536, pause=0.0):
        self.sock, self.buf, self.chunk, self.pause = sock, b"", chunk, pause

    def response(self):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            self.buf = rest
            self._fill()
            rest = self.buf
        body, self.buf = rest[:length], rest[length:]
        return status, body

    def _fill(self):
        if self.pause:
            time.sleep(self.pause)
        data = self.sock.recv(self.chunk)
        if not data:
            raise ConnectionError("closed")
        self.buf += data


def until(deadline, stop):
    return time.monotonic() < deadline and not stop.is_set()


def keep_alive(port, deadline, stop, stats, path, expected, kind):
    while until(deadline, stop):
        try:
            with connect(port) as s:
                reader = Reader(s)
                for _ in range(1000):
                    if not until(deadline, stop):
                        break
                    s.sendall(request(path))
                    status, body = reader.response()
                    if status == 200 and body == expected:
                        stats.ok(kind)
                    else:
                        stats.error(kind, "status %d" % status)
        except (OSError, ValueError) as e:
            stats.error(kind, type(e).__name__)


def new_connections(port, deadline, stop, stats):
    while until(deadline, stop):
        try:
            with connect(port) as s:
                s.sendall(request("/ka", close=True))
                status, body = Reader(s).response()
                if status == 200 and body == b"keep-alive":
                    stats.ok("new-connection")
                else:
                    stats.error("new-connection", "status %d" % status)
        except (OSError, ValueError) as e:
            stats.error("new-connection", type(e).__name__)


def pipelining(port, deadline, stop, stats):
    batch = request("/ka") * 32
    while until(deadline, stop):
        try:
            with connect(port) as s:
                reader = Reader(s)
                for _ in range(50):
                    if not until(deadline, stop):
                        break
                    s.sendall(batch)
                    good = sum(1 for _ in range(32) if reader.response() == (200, b"keep-alive"))
                    stats.ok("pipelined", good)
                    if good != 32:
                        stats.error("pipelined", "%d of 32" % good)
        except (OSError, ValueError) as e:
            stats.error("pipelined", type(e).__name__)


def slow_reader(port, deadline, stop, stats):
    """Reads a 256 KiB body 4 KiB at a time with a pause: a slow but live client."""
    while until(deadline, stop):
        try:
            with connect(port, timeout=30) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.sendall(request("/big"))
                status, body = Reader(s, chunk=4096, pause=0.01).response()
                if status == 200 and len(body) == BIG:
                    stats.ok("slow-reader")
                else:
                    stats.error("slow-reader", "status %d" % status)
        except (OSError, ValueError) as e:
            stats.error("slow-reader", type(e).__name__)


def never_reader(port, deadline, stop, stats):
    """Asks for the large body and never reads it, then goes away after 3 s."""
    while until(deadline, stop):
        try:
            s = connect(port)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(request("/big") * 8)
            time.sleep(3)
            s.close()
            stats.ok("never-reader")
        except OSError as e:
            stats.error("never-reader", type(e).__name__)


def admin_reads(port, deadline, stop, stats):
    paths = ["/__admin/requests?limit=20", "/__admin/mappings", "/__admin/requests/unmatched",
             "/__admin/scenarios"]
    i = 0
    while until(deadline, stop):
        path = paths[i % len(paths)]
        i += 1
        try:
            with connect(port, timeout=30) as s:
                s.sendall(request(path, close=True))
                status, _ = Reader(s).response()
                if status == 200:
                    stats.ok("admin")
                else:
                    stats.error("admin", "%s status %d" % (path, status))
        except (OSError, ValueError) as e:
            stats.error("admin", type(e).__name__)
        time.sleep(0.2)


def faults(port, deadline, stop, stats):
    while until(deadline, stop):
        for path in ("/reset", "/empty"):
            try:
                with connect(port) as s:
                    s.sendall(request(path))
                    data = s.recv(65536)
                    if data:
                        stats.error("fault", "%s answered" % path)
                    else:
                        stats.ok("fault")
            except ConnectionResetError:
                stats.ok("fault")
            except OSError as e:
                stats.error("fault", type(e).__name__)
        time.sleep(0.02)


def reloads(port, root, deadline, stop, stats):
    value = 0
    while until(deadline, stop):
        time.sleep(2)
        value += 1
        write_reload(root, value)
        expected = ("v%d" % value).encode()
        seen_at = None
        limit = time.monotonic() + 10
        while time.monotonic() < limit:
            try:
                with connect(port) as s:
                    s.sendall(request("/reload", close=True))
                    if Reader(s).response() == (200, expected):
                        seen_at = time.monotonic()
                        break
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        if seen_at is None:
            stats.error("reload", "v%d not served within 10 s" % value)
        else:
            stats.ok("reload")


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def default_binary():
    for candidate in (".build/release/mockserver", ".build/debug/mockserver"):
        if os.access(candidate, os.X_OK):
            return candidate
    sys.exit("soak: build the server first (make build-release)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("SOAK_SECONDS", "600")))
    parser.add_argument("--binary", default=os.environ.get("SOAK_BINARY") or default_binary())
    parser.add_argument("--rss-bound-mb", type=int, default=int(os.environ.get("SOAK_RSS_BOUND_MB", "96")),
                        help="most RSS growth from start to end allowed (MiB)")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="mockserver-soak-")
    fixtures = os.path.join(root, "FX")
    write_fixtures(fixtures, 0)
    server = subprocess.Popen(
        [args.binary, "--port", "0", "--fixtures", fixtures, "--idle-timeout-ms", "10000"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline()
        if not line.startswith("listening on http://"):
            sys.exit("soak: server did not start: %r" % line)
        port = int(line.strip().rsplit(":", 1)[1])
        threading.Thread(target=lambda: server.stdout.read(), daemon=True).start()
        time.sleep(0.5)
        start_rss, start_fds = rss_bytes(server.pid), fd_count(server.pid)
        stats, stop = Stats(), threading.Event()
        deadline = time.monotonic() + args.seconds
        workers = [
            (keep_alive, (port, deadline, stop, stats, "/ka", b"keep-alive", "keep-alive")),
            (keep_alive, (port, deadline, stop, stats, "/ka", b"keep-alive", "keep-alive")),
            (keep_alive, (port, deadline, stop, stats, "/delay", b"delayed", "delayed")),
            (keep_alive, (port, deadline, stop, stats, "/random", b"random", "delayed")),
            (new_connections, (port, deadline, stop, stats)),
            (pipelining, (port, deadline, stop, stats)),
            (slow_reader, (port, deadline, stop, stats)),
            (never_reader, (port, deadline, stop, stats)),
            (admin_reads, (port, deadline, stop, stats)),
            (faults, (port, deadline, stop, stats)),
            (reloads, (port, fixtures, deadline, stop, stats)),
        ]
        threads = [threading.Thread(target=f, args=a, daemon=True) for f, a in workers]
        started = time.monotonic()
        for t in threads:
            t.start()
        peak_rss = start_rss
        try:
            while time.monotonic() < deadline and server.poll() is None:
                time.sleep(1)
                peak_rss = max(peak_rss, rss_bytes(server.pid))
        except KeyboardInterrupt:
            stop.set()
        stop.set()
        for t in threads:
            t.join(timeout=60)
        elapsed = time.monotonic() - started
        alive = server.poll() is None
        if not alive:
            stats.error("server", "exited with %s" % server.returncode)
            end_rss = end_fds = 0
        else:
            # Connections the clients closed are gone once the server has seen the close; lingering
            # closes end within 2 s.
            time.sleep(3)
            end_rss, end_fds = rss_bytes(server.pid), fd_count(server.pid)
        served = sum(stats.counts.values())
        errors = sum(stats.errors.values())
        growth = end_rss - start_rss
        report = {
            "seconds": round(elapsed, 1), "requests": served, "errors": errors, "by_kind": stats.counts,
            "error_kinds": stats.errors, "rss_start_mb": round(start_rss / 2**20, 1),
            "rss_end_mb": round(end_rss / 2**20, 1), "rss_peak_mb": round(peak_rss / 2**20, 1),
            "rss_bound_mb": args.rss_bound_mb, "fds_start": start_fds, "fds_end": end_fds,
        }
        print("soak: %.0f s, %d requests, %d errors" % (elapsed, served, errors))
        print("soak: by kind: " + ", ".join("%s %d" % kv for kv in sorted(stats.counts.items())))
        for kind, count in sorted(stats.errors.items()):
            print("soak: error %s x%d" % (kind, count))
        print("soak: RSS %.1f MiB at start, %.1f MiB at end (peak %.1f; bound: start + %d MiB)"
              % (start_rss / 2**20, end_rss / 2**20, peak_rss / 2**20, args.rss_bound_mb))
        print("soak: open descriptors %d at start, %d at end" % (start_fds, end_fds))
        os.makedirs(".build", exist_ok=True)
        with open(".build/soak.json", "w") as f:
            json.dump(report, f, indent=1)
        failed = errors > 0 or not alive or end_fds != start_fds or growth > args.rss_bound_mb * 2**20
        print("soak: " + ("FAILED" if failed else "passed"))
        return 1 if failed else 0
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
