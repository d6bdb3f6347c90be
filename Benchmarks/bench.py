#!/usr/bin/env python3
"""MockServer against nginx on loopback: throughput, latency, CPU per request, startup, matching cost, RSS.

Run through `make bench` (Benchmarks/bench.sh installs the tools and builds the release binary first).
Standard library only. The server under test is pinned to CPU 0, the load generator (and this script) to
CPU 1; every measurement alternates ours and nginx (A B A B) for the configured rounds and reports the
median with the range. Prints one table and writes .build/bench.json. See docs/performance.md.
"""

import argparse
import atexit
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

BODY = '{"status":"OK","result":{"friends":[{"id":"1","name":"friend 1"}]}}'
BENCH_PATH = "/friends"
TEMPLATE_HIT_PATH = "/api/users/2500/items/42"
GZIP_PATH = "/bench/gzip"
# A 2 KB JSON list: the gzip row's response, and the request body the equalToJson and matchesJsonPath rows
# send.
GZIP_BODY = json.dumps({"status": "OK", "result": {"friends": [
    {"id": str(i), "name": f"friend {i}", "email": f"friend{i}@example.com", "active": i % 2 == 0}
    for i in range(24)]}}, separators=(",", ":"))
SERVER_CPU = "0"
CLIENT_CPU = "1"
CLK_TCK = os.sysconf("SC_CLK_TCK")
HOST = "127.0.0.1"

QUICK = os.environ.get("BENCH_QUICK", "") not in ("", "0")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1" if QUICK else "3"))
DURATION = int(os.environ.get("BENCH_DURATION", "1" if QUICK else "5"))
AB_REQUESTS = int(os.environ.get("BENCH_AB_REQUESTS", "5000" if QUICK else "20000"))
STARTUP_RUNS = int(os.environ.get("BENCH_STARTUP_RUNS", "3" if QUICK else "10"))
JOURNAL_REQUESTS = int(os.environ.get("BENCH_JOURNAL_REQUESTS", "100000" if QUICK else "1000000"))
MANY_STUBS = 10_000

_children = []


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def die(message):
    log(f"error: {message}")
    sys.exit(1)


# ---------------------------------------------------------------------------------------------------------
# Processes


def _kill_all():
    for p in list(_children):
        stop_process(p)


def _on_signal(signum, _frame):
    sys.exit(128 + signum)


atexit.register(_kill_all)
signal.signal(signal.SIGINT, _on_signal)
signal.signal(signal.SIGTERM, _on_signal)


def spawn(cmd, **kwargs):
    p = subprocess.Popen(cmd, **kwargs)
    _children.append(p)
    return p


def stop_process(p, timeout=5.0):
    if p.poll() is None:
        try:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        except ProcessLookupError:
            pass
    if p in _children:
        _children.remove(p)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def proc_cpu_seconds(pid):
    """(utime, stime) of the whole process (all threads) in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state); utime is field 14, stime field 15.
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def proc_rss_kib(pid, field="VmRSS"):
    """VmRSS (resident, including shared library pages) or RssAnon (private heap and stacks), KiB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        return None
    return None


def http_get_status(port, path, timeout=2.0, headers=None):
    """One request on a fresh connection; returns the status code, or None if it could not connect."""
    try:
        s = socket.create_connection((HOST, port), timeout=timeout)
    except OSError:
        return None
    try:
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\n{extra}Connection: close\r\n\r\n".encode())
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        parts = data.split(b" ", 2)
        return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None
    except OSError:
        return None
    finally:
        s.close()


# ---------------------------------------------------------------------------------------------------------
# Servers


class Server:
    """A server under test, started pinned to SERVER_CPU."""

    def __init__(self, label, kind, workdir):
        self.label = label
        self.kind = kind
        self.workdir = workdir
        self.proc = None
        self.port = None
        self.requests_served = 0  # counted from the load generators' reports
        self.track = []  # (requests served, VmRSS KiB, RssAnon KiB) after each load run

    def note_requests(self, n):
        self.requests_served += n
        self.track.append((self.requests_served, self.rss_kib(), self.anon_kib()))

    @property
    def pid(self):
        return self.proc.pid

    def cpu(self):
        return proc_cpu_seconds(self.pid)

    def rss_kib(self):
        return proc_rss_kib(self.pid)

    def anon_kib(self):
        return proc_rss_kib(self.pid, "RssAnon")

    def stop(self):
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None

    def check_alive(self):
        if self.proc is None or self.proc.poll() is not None:
            die(f"{self.label} exited unexpectedly (see {self.workdir})")


class Ours(Server):
    def __init__(self, label, binary, fixtures, workdir, extra=(), cpus=SERVER_CPU):
        super().__init__(label, "ours", workdir)
        self.binary = binary
        self.fixtures = fixtures
        self.extra = list(extra)
        self.cpus = cpus
        self.https_port = None

    def command(self, port):
        return [
            "taskset", "-c", self.cpus, self.binary, "--host", HOST, "--port", str(port),
            "--fixtures", self.fixtures, "--quiet",
        ] + self.extra

    def start(self, port=0, wait=True):
        os.makedirs(self.workdir, exist_ok=True)
        out_path = os.path.join(self.workdir, "stdout.log")
        self.stdout_path = out_path
        self.proc = spawn(
            self.command(port), stdout=open(out_path, "w"),
            stderr=open(os.path.join(self.workdir, "stderr.log"), "w"), stdin=subprocess.DEVNULL)
        self.port = port or None
        if wait:
            self.wait_listening()
        return self

    def wait_listening(self, timeout=60.0):
        deadline = time.monotonic() + timeout
        pattern = re.compile(r"listening on https?://[^\s]*:(\d+)")
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = open(os.path.join(self.workdir, "stderr.log")).read()[-2000:]
                die(f"{self.label} exited with {self.proc.returncode} before listening:\n{err}")
            with open(self.stdout_path) as f:
                text = f.read()
            m = pattern.search(text)
            wants_https = "--https-port" in self.extra
            tls = re.search(r"listening on https://[^\s]*:(\d+)", text)
            if m and (tls or not wants_https):
                self.port = int(m.group(1))
                self.https_port = int(tls.group(1)) if tls else None
                return
            time.sleep(0.002)
        die(f"{self.label} did not print 'listening on' within {timeout:.0f} s")


class Nginx(Server):
    def __init__(self, label, workdir, tls=None):
        super().__init__(label, "nginx", workdir)
        self.binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.tls = tls  # (certificate PEM, key PEM): also listen with TLS 1.3 only on https_port
        self.https_port = None

    def write_config(self, port):
        os.makedirs(os.path.join(self.workdir, "tmp"), exist_ok=True)
        body = BODY.replace("\\", "\\\\").replace("'", "\\'")
        gzip_body = GZIP_BODY.replace("\\", "\\\\").replace("'", "\\'")
        t = os.path.join(self.workdir, "tmp")
        tls = ""
        if self.tls:
            self.https_port = self.https_port or free_port()
            tls = f"""
    server {{
        listen {HOST}:{self.https_port} ssl reuseport;
        ssl_certificate {self.tls[0]};
        ssl_certificate_key {self.tls[1]};
        ssl_protocols TLSv1.3;
        ssl_session_cache off;
        ssl_session_tickets off;
        location = {BENCH_PATH} {{
            default_type application/json;
            return 200 '{body}';
        }}
    }}"""
        conf = f"""# Generated by Benchmarks/bench.py: one process, answers from memory.
daemon off;
master_process off;
worker_processes 1;
pid {self.workdir}/nginx.pid;
error_log {self.workdir}/error.log warn;
events {{
    worker_connections 4096;
}}
http {{
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 65s;
    client_body_temp_path {t}/body;
    proxy_temp_path {t}/proxy;
    fastcgi_temp_path {t}/fastcgi;
    uwsgi_temp_path {t}/uwsgi;
    scgi_temp_path {t}/scgi;
    server {{
        listen {HOST}:{port} reuseport;
        location = {BENCH_PATH} {{
            default_type application/json;
            return 200 '{body}';
        }}
        location = {GZIP_PATH} {{
            gzip on;
            gzip_types application/json;
            gzip_min_length 0;
            gzip_comp_level 6;
            default_type application/json;
            return 200 '{gzip_body}';
        }}
    }}{tls}
}}
"""
        path = os.path.join(self.workdir, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        return path

    def start(self, port=0, wait=True):
        os.makedirs(self.workdir, exist_ok=True)
        self.port = port or free_port()
        conf = self.write_config(self.port)
        self.proc = spawn(
            ["taskset", "-c", SERVER_CPU, self.binary, "-p", self.workdir, "-e",
             os.path.join(self.workdir, "error.log"), "-c", conf],
            stdout=open(os.path.join(self.workdir, "stdout.log"), "w"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        if wait:
            deadline = time.monotonic() + 10
            while http_get_status(self.port, BENCH_PATH) != 200:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = open(os.path.join(self.workdir, "error.log")).read()[-2000:]
                    die(f"nginx did not start:\n{err}")
                time.sleep(0.005)
        return self


# ---------------------------------------------------------------------------------------------------------
# Load generators


class Viewers:
    """Dashboard viewers: `count` connections to GET /__admin/events, each read by a thread until closed
    (what an open dashboard page costs the server: every request is framed and written to each)."""

    def __init__(self, port, count):
        import threading
        self.sockets = []
        self.bytes = [0] * count
        self.threads = []
        for i in range(count):
            s = socket.create_connection((HOST, port))
            s.sendall(b"GET /__admin/events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n")
            self.sockets.append(s)
            t = threading.Thread(target=self._drain, args=(i, s), daemon=True)
            t.start()
            self.threads.append(t)

    def _drain(self, i, s):
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    return
                self.bytes[i] += len(data)
        except OSError:
            return

    def close(self):
        for s in self.sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        for t in self.threads:
            t.join(timeout=5)
        return sum(self.bytes)


def measure_viewers(binary, fixtures, workdir, count=10):
    """Serving with `count` dashboard viewers connected and reading (wrk c32), on a fresh server; returns
    the wrk runs and the event-stream bytes the viewers read."""
    s = Ours("ours-viewers", binary, fixtures, workdir).start()
    viewers = Viewers(s.port, count)
    time.sleep(0.2)
    wrk(s, 32, 1)
    runs = [wrk(s, 32, DURATION) for _ in range(ROUNDS)]
    read = viewers.close()
    s.stop()
    return runs, read


def _units_to_ms(value, unit):
    v = float(value)
    return {"us": v / 1000, "ms": v, "s": v * 1000, "m": v * 60000}[unit]


def run_client(cmd, server, sample_rss=False, client_cpus=CLIENT_CPU):
    """Runs a load generator pinned to CLIENT_CPU; returns (stdout, server CPU s, client CPU %, wall s,
    max server RSS KiB while it ran)."""
    cpu0 = server.cpu()
    t0 = time.monotonic()
    p = spawn(["taskset", "-c", client_cpus] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    max_rss = server.rss_kib() or 0
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if sample_rss:
            max_rss = max(max_rss, server.rss_kib() or 0)
        time.sleep(0.05)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    out = p.stdout.read().decode(errors="replace")
    err = p.stderr.read().decode(errors="replace")
    _children.remove(p)
    server.check_alive()
    cpu1 = server.cpu()
    cpu = (cpu1[0] - cpu0[0], cpu1[1] - cpu0[1])
    if p.returncode != 0:
        die(f"{' '.join(cmd)} failed ({p.returncode}):\n{out}\n{err}")
    client_cpu = 100.0 * (usage.ru_utime + usage.ru_stime) / wall if wall > 0 else 0.0
    return out + err, cpu, client_cpu, wall, max_rss


def wrk(server, connections, duration, path=BENCH_PATH, sample_rss=False, script=None, https=False, threads=1,
        client_cpus=CLIENT_CPU, headers=()):
    url = f"https://{HOST}:{server.https_port}{path}" if https else f"http://{HOST}:{server.port}{path}"
    extra = ["-s", script] if script else []
    for header in headers:
        extra += ["-H", header]
    out, cpu, client_cpu, wall, max_rss = run_client(
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency"] + extra + [url], server,
        sample_rss, client_cpus)
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    n = re.search(r"(\d+) requests in ([\d.]+)(\w+),", out)
    if not m or not n:
        die(f"cannot parse wrk output:\n{out}")
    latency = {}
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s|m)\s*$", out, re.M):
        latency[pct] = _units_to_ms(value, unit)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    requests = int(n.group(1))
    server.note_requests(requests)
    return {
        "rps": float(m.group(1)),
        "requests": requests,
        "p50_ms": latency.get("50"),
        "p99_ms": latency.get("99"),
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
        "socket_errors": sum(int(x) for x in sock.groups()) if sock else 0,
        "server_cpu_s": sum(cpu),
        "cpu_us_per_req": 1e6 * sum(cpu) / requests if requests else None,
        "user_us_per_req": 1e6 * cpu[0] / requests if requests else None,
        "sys_us_per_req": 1e6 * cpu[1] / requests if requests else None,
        "client_cpu_pct": client_cpu,
        "max_rss_kib": max_rss,
    }


def ab(server, requests, concurrency):
    url = f"http://{HOST}:{server.port}{BENCH_PATH}"
    out, cpu, client_cpu, wall, _ = run_client(
        ["ab", "-q", "-r", "-n", str(requests), "-c", str(concurrency), url], server)
    rps = re.search(r"Requests per second:\s+([\d.]+)", out)
    complete = re.search(r"Complete requests:\s+(\d+)", out)
    failed = re.search(r"Failed requests:\s+(\d+)", out)
    non2xx = re.search(r"Non-2xx responses:\s+(\d+)", out)
    if not rps or not complete:
        die(f"cannot parse ab output:\n{out}")
    done = int(complete.group(1))
    server.note_requests(done)
    return {
        "rps": float(rps.group(1)),
        "requests": done,
        "failed": int(failed.group(1)) if failed else 0,
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
        "server_cpu_s": sum(cpu),
        "cpu_us_per_req": 1e6 * sum(cpu) / done if done else None,
        "user_us_per_req": 1e6 * cpu[0] / done if done else None,
        "sys_us_per_req": 1e6 * cpu[1] / done if done else None,
        "client_cpu_pct": client_cpu,
    }


# ---------------------------------------------------------------------------------------------------------
# Fixtures


def stub(request, body=BODY):
    return {
        "request": request,
        "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "body": body},
    }


def write_stub(directory, name, mapping):
    with open(os.path.join(directory, name), "w") as f:
        json.dump(mapping, f)


def make_single_stub_fixtures(root):
    mappings = os.path.join(root, "mappings")
    os.makedirs(mappings, exist_ok=True)
    write_stub(mappings, "friends.json", stub({"method": "GET", "urlPath": BENCH_PATH}))
    return root


def make_many_stub_fixtures(root, count=MANY_STUBS):
    """count stubs, one file each: half literal paths, half path templates; the benchmarked /friends is a
    literal in the middle of the load order (neither first nor last, whichever way a matcher scans)."""
    mappings = os.path.join(root, "mappings")
    os.makedirs(mappings, exist_ok=True)
    literals = count // 2
    middle = literals // 2
    for i in range(literals):
        if i == middle:
            request = {"method": "GET", "urlPath": BENCH_PATH}
        else:
            request = {"method": "GET", "urlPath": f"/api/resources/{i}/details"}
        body = BODY if i == middle else json.dumps({"id": i, "kind": "literal"})
        write_stub(mappings, f"stub-{2 * i:05d}.json", stub(request, body))
    for i in range(count - literals):
        request = {"method": "GET", "urlPathTemplate": f"/api/users/{i}/items/{{itemId}}"}
        body = BODY if i == 2500 else json.dumps({"id": i, "kind": "template"})
        write_stub(mappings, f"stub-{2 * i + 1:05d}.json", stub(request, body))
    return root


# Response templating: the same JSON answer prepared and templated (three substitutions, one of them a
# jsonPath on a 200-byte request body), both requested with that POST body.
TEMPLATE_BODY = json.dumps({"user": {"id": 7, "name": "Aiko Tanaka", "email": "aiko@example.com",
                                     "roles": ["admin", "editor"], "tags": ["a", "b", "c"]},
                            "note": "x" * 60, "flags": {"active": True, "verified": False}},
                           separators=(",", ":"))
TEMPLATED = ('{"status":"OK","result":{"id":"{{request.path.[2]}}","method":"{{request.method}}",'
             '"name":"{{jsonPath request.body \'$.user.name\'}}"}}')
PREPARED = '{"status":"OK","result":{"id":"7","method":"POST","name":"Aiko Tanaka"}}'


def make_template_fixtures(root):
    mappings = os.path.join(root, "mappings")
    os.makedirs(mappings, exist_ok=True)
    for name, body, extra in (("prepared", PREPARED, {}), ("templated", TEMPLATED,
                                                          {"transformers": ["response-template"]})):
        mapping = stub({"method": "POST", "urlPath": f"/bench/{name}/7"}, body)
        mapping["response"].update(extra)
        write_stub(mappings, f"{name}.json", mapping)
    script = os.path.join(root, "post.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                f"wrk.body = {json.dumps(TEMPLATE_BODY)}\n")
    return root, script


# Request matching on content: a literal POST (the baseline), an equalToJson on a 2 KB body, a
# matchesJsonPath filter on the same body; and a 2 KB JSON answer asked for with Accept-Encoding: gzip.
def make_feature_fixtures(root):
    mappings = os.path.join(root, "mappings")
    os.makedirs(mappings, exist_ok=True)
    write_stub(mappings, "literal.json", stub({"method": "POST", "urlPath": "/bench/literal"}))
    write_stub(mappings, "equal-json.json", stub({
        "method": "POST", "urlPath": "/bench/equal-json",
        "bodyPatterns": [{"equalToJson": GZIP_BODY}]}))
    write_stub(mappings, "json-path.json", stub({
        "method": "POST", "urlPath": "/bench/json-path",
        "bodyPatterns": [{"matchesJsonPath": "$.result.friends[?(@.email == 'friend7@example.com')]"}]}))
    # An imported Pact interaction (the pact custom matcher): the same 2 KB body, each friend's fields by type.
    write_stub(mappings, "pact.json", stub({
        "method": "POST", "urlPath": "/bench/pact",
        "customMatcher": {"name": "pact", "parameters": {"specification": 3, "request": {
            "method": "POST", "path": "/bench/pact", "headers": {"Content-Type": "application/json"},
            "body": json.loads(GZIP_BODY),
            "matchingRules": {"body": {"$.result.friends": {"matchers": [{"match": "type", "min": 1}]},
                                       "$.result.friends[*].*": {"matchers": [{"match": "type"}]}}}}}}}))
    write_stub(mappings, "gzip.json", stub({"method": "GET", "urlPath": GZIP_PATH}, GZIP_BODY))
    write_stub(mappings, "friends.json", stub({"method": "GET", "urlPath": BENCH_PATH}))
    script = os.path.join(root, "post.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                f"wrk.body = {json.dumps(GZIP_BODY)}\n")
    gzip_script = os.path.join(root, "gzip.lua")
    with open(gzip_script, "w") as f:
        f.write('wrk.headers["Accept-Encoding"] = "gzip"\n')
    close_script = os.path.join(root, "close.lua")
    with open(close_script, "w") as f:
        f.write('wrk.headers["Connection"] = "close"\n')
    return root, script, gzip_script, close_script


def make_certificate(root):
    """A self-signed P-256 certificate for 127.0.0.1, shared by ours and nginx: (cert PEM, key PEM)."""
    os.makedirs(root, exist_ok=True)
    cert, key = os.path.join(root, "cert.pem"), os.path.join(root, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


def make_bundled_fixtures(root, repo):
    """The repository's Fixtures/ plus one /friends stub (so that the startup probe has a 200 to wait for).
    Returns (dir, note)."""
    bundled = os.environ.get("BENCH_FIXTURES") or os.path.join(repo, "Fixtures")
    if os.path.isdir(os.path.join(bundled, "mappings")) or os.path.isfile(os.path.join(bundled, "envelopes.json")):
        shutil.copytree(bundled, root)
        os.makedirs(os.path.join(root, "mappings"), exist_ok=True)
        write_stub(os.path.join(root, "mappings"), "zz-bench-friends.json",
                   stub({"method": "GET", "urlPath": BENCH_PATH}))
        count = sum(len(files) for _, _, files in os.walk(os.path.join(root, "mappings")))
        return root, f"{os.path.relpath(bundled, repo)}/ ({count - 1} mapping files) + the /friends stub"
    make_single_stub_fixtures(root)
    return root, "Fixtures/ absent: the generated single-stub folder stands in for the bundled fixtures"


# ---------------------------------------------------------------------------------------------------------
# Startup


def measure_startup(make_server, path=BENCH_PATH, headers=None):
    """Process start to the first 200 response to GET `path` (/friends), polling from CPU 1. Returns (ms,
    status): when the server answers but never 200 within 1 s, the time of its first answer and that
    status."""
    port = free_port()
    server = make_server()
    t0 = time.perf_counter()
    server.start(port=port, wait=False)
    first = None
    deadline = time.monotonic() + 30
    try:
        while True:
            status = http_get_status(port, path, timeout=5, headers=headers)
            now = time.perf_counter()
            if status == 200:
                return (now - t0) * 1000, 200
            if status is not None and first is None:
                first = ((now - t0) * 1000, status)
            if first and (now - t0) * 1000 - first[0] > 1000:
                return first
            if server.proc.poll() is not None:
                die(f"{server.label} exited during the startup probe (see {server.workdir})")
            if time.monotonic() > deadline:
                die(f"{server.label} did not answer within 30 s")
            time.sleep(0.0005)
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------------------
# Statistics and output


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def fmt_value(v, unit):
    if v is None:
        return "-"
    if unit == "req/s":
        return f"{v:,.0f}"
    if unit == "ms":
        return f"{v * 1000:.0f} µs" if v < 1 else f"{v:.2f} ms"
    if unit == "µs":
        return f"{v:.2f}"
    if unit == "MiB":
        return f"{v:.1f}"
    if unit == "%":
        return f"{v:.1f} %"
    if unit == "ms-abs":
        return f"{v:.1f}"
    if unit == "per-req":
        return f"{v:.2f}"
    return f"{v:.1f}"


def fmt_summary(s, unit):
    if s is None:
        return "-"
    if len(s["runs"]) == 1 or s["min"] == s["max"]:
        return fmt_value(s["median"], unit)
    return f"{fmt_value(s['median'], unit)} ({fmt_value(s['min'], unit)}–{fmt_value(s['max'], unit)})"


def measure_proxy(binary, fixtures, tmp):
    """req/s and server CPU through a catch-all proxy stub (`proxyBaseUrl`) to a local upstream (ours, one
    stub, pinned to the same CPU), against that upstream alone: the proxy's overhead (issue 15)."""
    up = Ours("proxy-upstream", binary, fixtures, os.path.join(tmp, "proxy-upstream")).start()
    root = os.path.join(tmp, "fixtures-proxy")
    os.makedirs(os.path.join(root, "mappings"), exist_ok=True)
    write_stub(os.path.join(root, "mappings"), "proxy.json",
               {"request": {"urlPattern": ".*"}, "response": {"proxyBaseUrl": f"http://{HOST}:{up.port}"}})
    px = Ours("proxy", binary, root, os.path.join(tmp, "proxy")).start()
    for s in (up, px):
        if http_get_status(s.port, BENCH_PATH) != 200:
            die(f"{s.label} does not answer GET {BENCH_PATH} with 200")
        wrk(s, 32, 1)
    runs = {"direct": [], "proxied": []}
    for _ in range(ROUNDS):
        runs["direct"].append(wrk(up, 32, DURATION))
        runs["proxied"].append(wrk(px, 32, DURATION))
    up.stop()
    px.stop()
    return runs


def measure_store(binary, fixtures, tmp):
    """req/s and server CPU of the plain stub on a replica with `--state-store` (issue 47; a local
    redis-server on the client's CPU) against the same server without it, alternated round by round: what the
    shared store costs a plain stub (the target: within 5 %)."""
    if not shutil.which("redis-server"):
        die("BENCH_ONLY=store needs redis-server (make deps installs it)")
    redis_port = free_port()
    redis = spawn(["taskset", "-c", CLIENT_CPU, "redis-server", "--port", str(redis_port), "--save", "",
                   "--appendonly", "no", "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", redis_port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                die("redis-server did not answer PING")
            time.sleep(0.05)
        alone = Ours("store-without", binary, fixtures, os.path.join(tmp, "store-without")).start()
        shared = Ours("store-with", binary, fixtures, os.path.join(tmp, "store-with"),
                      extra=["--state-store", f"redis://127.0.0.1:{redis_port}"]).start()
        for s in (alone, shared):
            if http_get_status(s.port, BENCH_PATH) != 200:
                die(f"{s.label} does not answer GET {BENCH_PATH} with 200")
            wrk(s, 32, 1)
        runs = {"without": [], "with": [], "scenario-without": [], "scenario-with": []}
        for _ in range(ROUNDS):
            runs["without"].append(wrk(alone, 32, DURATION))
            before = redis_command_calls(redis_port)
            run = wrk(shared, 32, DURATION)
            after = redis_command_calls(redis_port)
            # The journal: every served request becomes one XADD (batched by the writer thread).
            run["xadd_per_req"] = (after.get("xadd", 0) - before.get("xadd", 0)) / max(run["requests"], 1)
            runs["with"].append(run)
        # A scenario stub (a state it requires): each request is one commit in the store (EVAL).
        for s in (alone, shared):
            post_json(s.port, "/__admin/mappings", STORE_SCENARIO_STUB)
            if http_get_status(s.port, "/bench-scenario") != 200:
                die(f"{s.label} does not answer GET /bench-scenario with 200")
        for _ in range(ROUNDS):
            runs["scenario-without"].append(wrk(alone, 32, DURATION, path="/bench-scenario"))
            before = redis_command_calls(redis_port)
            run = wrk(shared, 32, DURATION, path="/bench-scenario")
            after = redis_command_calls(redis_port)
            run["eval_per_req"] = (after.get("eval", 0) - before.get("eval", 0)) / max(run["requests"], 1)
            run["commands_per_req"] = (sum(after.values()) - sum(before.values())) / max(run["requests"], 1)
            runs["scenario-with"].append(run)
        alone.stop()
        shared.stop()
        store_url = f"redis://127.0.0.1:{redis_port}"
        # The state extension's contexts in the store: create-then-read cycles (a recordState write, then a
        # state-matcher and {{state}} read), each request served off the event loop with its round trips.
        root, script = make_state_fixtures(os.path.join(tmp, "fixtures-state-store"))
        state_alone = Ours("store-state-without", binary, root, os.path.join(tmp, "store-state-without")).start()
        state_shared = Ours("store-state-with", binary, root, os.path.join(tmp, "store-state-with"),
                            extra=["--state-store", store_url]).start()
        # Proxied exchanges: with the store each is sent to it (the recent exchanges of snapshots).
        upstream = Ours("store-upstream", binary, fixtures, os.path.join(tmp, "store-upstream")).start()
        proxy_root = os.path.join(tmp, "fixtures-store-proxy")
        os.makedirs(os.path.join(proxy_root, "mappings"), exist_ok=True)
        write_stub(os.path.join(proxy_root, "mappings"), "proxy.json",
                   {"request": {"urlPattern": ".*"}, "response": {"proxyBaseUrl": f"http://{HOST}:{upstream.port}"}})
        proxy_alone = Ours("store-proxy-without", binary, proxy_root, os.path.join(tmp, "store-proxy-without")).start()
        proxy_shared = Ours("store-proxy-with", binary, proxy_root, os.path.join(tmp, "store-proxy-with"),
                            extra=["--state-store", store_url]).start()
        for s in (proxy_alone, proxy_shared):
            if http_get_status(s.port, BENCH_PATH) != 200:
                die(f"{s.label} does not answer GET {BENCH_PATH} with 200")
            wrk(s, 32, 1)
        for key in ("cycle-without", "cycle-with", "proxy-without", "proxy-with"):
            runs[key] = []
        for _ in range(ROUNDS):
            runs["cycle-without"].append(wrk(state_alone, 32, DURATION, path="/bench/records", script=script))
            before = redis_command_calls(redis_port)
            run = wrk(state_shared, 32, DURATION, path="/bench/records", script=script)
            after = redis_command_calls(redis_port)
            run["commands_per_req"] = (sum(after.values()) - sum(before.values())) / max(run["requests"], 1)
            runs["cycle-with"].append(run)
            runs["proxy-without"].append(wrk(proxy_alone, 32, DURATION))
            before = redis_command_calls(redis_port)
            run = wrk(proxy_shared, 32, DURATION)
            after = redis_command_calls(redis_port)
            run["eval_per_req"] = (after.get("eval", 0) - before.get("eval", 0)) / max(run["requests"], 1)
            runs["proxy-with"].append(run)
        for s in (state_alone, state_shared, proxy_alone, proxy_shared, upstream):
            s.stop()
        return runs
    finally:
        redis.kill()
        redis.wait()


STORE_SCENARIO_STUB = json.dumps({
    "scenarioName": "bench", "requiredScenarioState": "Started",
    "request": {"method": "GET", "url": "/bench-scenario"}, "response": {"status": 200, "body": "s"}})


def redis_command_calls(port):
    """{command: calls} from `INFO commandstats` of the redis-server on `port`."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"INFO commandstats\r\n")
        data = b""
        while b"\r\n" not in data:
            data += s.recv(65536)
        header, _, rest = data.partition(b"\r\n")
        length = int(header[1:])
        while len(rest) < length:
            rest += s.recv(65536)
    calls = {}
    for name, count in re.findall(r"^cmdstat_(\w+):calls=(\d+)", rest.decode(), re.M):
        calls[name] = int(count)
    return calls


def post_json(port, path, body):
    req = urllib.request.Request(f"http://{HOST}:{port}{path}", data=body.encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=5).read()


def store_rows(runs):
    """The state-store rows: (label, summary, unit), with / without, non-2xx count."""
    without = summary([x["rps"] for x in runs["without"]])
    with_store = summary([x["rps"] for x in runs["with"]])
    return [
        ("req/s, plain stub, no store (c32)", without, "req/s"),
        ("  server CPU µs/req", summary([x["cpu_us_per_req"] for x in runs["without"]]), "µs"),
        ("req/s, plain stub, --state-store (c32)", with_store, "req/s"),
        ("  server CPU µs/req", summary([x["cpu_us_per_req"] for x in runs["with"]]), "µs"),
        ("  journal XADDs per request", summary([x["xadd_per_req"] for x in runs["with"]]), "per-req"),
        ("req/s, scenario stub, no store (c32)", summary([x["rps"] for x in runs["scenario-without"]]), "req/s"),
        ("req/s, scenario stub, --state-store (c32)", summary([x["rps"] for x in runs["scenario-with"]]),
         "req/s"),
        ("  store commits (EVAL) per request", summary([x["eval_per_req"] for x in runs["scenario-with"]]),
         "per-req"),
        ("  store commands per request", summary([x["commands_per_req"] for x in runs["scenario-with"]]),
         "per-req"),
        ("  p99", summary([x["p99_ms"] for x in runs["scenario-with"]]), "ms"),
        ("create-then-read cycles/s, no store (c32)", summary([x["rps"] / 2 for x in runs["cycle-without"]]),
         "req/s"),
        ("create-then-read cycles/s, --state-store", summary([x["rps"] / 2 for x in runs["cycle-with"]]),
         "req/s"),
        ("  store commands per request, cycle", summary([x["commands_per_req"] for x in runs["cycle-with"]]),
         "per-req"),
        ("req/s, proxied, no store (c32)", summary([x["rps"] for x in runs["proxy-without"]]), "req/s"),
        ("req/s, proxied, --state-store (c32)", summary([x["rps"] for x in runs["proxy-with"]]), "req/s"),
        ("  store EVALs per proxied request", summary([x["eval_per_req"] for x in runs["proxy-with"]]),
         "per-req"),
    ], ratio(median_of(with_store), median_of(without)), sum(x["non2xx"] for g in runs.values() for x in g)


def proxy_rows(runs):
    """The proxy rows of the table: (label, summary, unit)."""
    direct = summary([x["rps"] for x in runs["direct"]])
    proxied = summary([x["rps"] for x in runs["proxied"]])
    return [
        ("req/s, upstream alone (c32)", direct, "req/s"),
        ("req/s, through a proxy stub (c32)", proxied, "req/s"),
        ("  proxy server CPU µs/req", summary([x["cpu_us_per_req"] for x in runs["proxied"]]), "µs"),
        ("  proxied p99", summary([x["p99_ms"] for x in runs["proxied"]]), "ms"),
    ], ratio(median_of(proxied), median_of(direct)), sum(x["non2xx"] for g in runs.values() for x in g)


SESSION_HEADER = "X-Mock-Session: bench"
SESSION_STUB = json.dumps({"request": {"method": "GET", "url": "/bench-session"},
                           "response": {"status": 200, "body": "s"}})


def measure_sessions(binary, tmp):
    """req/s and server CPU of a plain stub without a session, the same (server's) stub asked in a session
    (`X-Mock-Session`), and a session's own stub (issue 47; docs/scaling.md#sessions), one server,
    alternated round by round."""
    root = make_single_stub_fixtures(os.path.join(tmp, "fixtures-sessions"))
    server = Ours("ours-sessions", binary, root, os.path.join(tmp, "ours-sessions")).start()
    post_json(server.port, "/__session/bench/__admin/mappings", SESSION_STUB)
    cases = {"none": (BENCH_PATH, ()), "server-stub": (BENCH_PATH, (SESSION_HEADER,)),
             "own-stub": ("/bench-session", (SESSION_HEADER,))}
    for path, headers in cases.values():
        if http_get_status(server.port, path, headers=dict(h.split(": ", 1) for h in headers)) != 200:
            die(f"the sessions server does not answer GET {path} {headers} with 200")
        wrk(server, 32, 1, path=path, headers=headers)
    runs = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, (path, headers) in cases.items():
            runs[name].append(wrk(server, 32, DURATION, path=path, headers=headers))
    server.stop()
    return runs


def sessions_rows(runs):
    """The session rows: (label, summary, unit), in a session / without, non-2xx count."""
    none = summary([x["rps"] for x in runs["none"]])
    server_stub = summary([x["rps"] for x in runs["server-stub"]])
    return [
        ("req/s, plain stub, no session (c32)", none, "req/s"),
        ("  server CPU µs/req", summary([x["cpu_us_per_req"] for x in runs["none"]]), "µs"),
        ("req/s, the same stub in a session", server_stub, "req/s"),
        ("  server CPU µs/req", summary([x["cpu_us_per_req"] for x in runs["server-stub"]]), "µs"),
        ("req/s, a session's own stub", summary([x["rps"] for x in runs["own-stub"]]), "req/s"),
        ("  server CPU µs/req", summary([x["cpu_us_per_req"] for x in runs["own-stub"]]), "µs"),
    ], ratio(median_of(server_stub), median_of(none)), sum(x["non2xx"] for g in runs.values() for x in g)


def measure_templating(binary, tmp):
    """req/s and server CPU of the same JSON answer prepared and templated (issue 14), one server, POSTed
    with the 200-byte JSON body, alternated round by round."""
    tpl_root, tpl_script = make_template_fixtures(os.path.join(tmp, "fixtures-templating"))
    tpl = Ours("ours-templating", binary, tpl_root, os.path.join(tmp, "ours-templating")).start()
    for name in ("prepared", "templated"):
        wrk(tpl, 32, 1, path=f"/bench/{name}/7", script=tpl_script)
    runs = {"prepared": [], "templated": []}
    for _ in range(ROUNDS):
        for name in ("prepared", "templated"):
            runs[name].append(wrk(tpl, 32, DURATION, path=f"/bench/{name}/7", script=tpl_script))
    tpl.stop()
    return runs


def templating_rows(runs):
    """The templating rows of the table: (label, summary, unit), the templated / prepared ratio and the
    count of non-2xx answers."""
    prepared = summary([x["rps"] for x in runs["prepared"]])
    templated = summary([x["rps"] for x in runs["templated"]])
    return [
        ("req/s, prepared JSON (POST)", prepared, "req/s"),
        ("req/s, templated JSON", templated, "req/s"),
        ("  server CPU µs/req, prepared", summary([x["cpu_us_per_req"] for x in runs["prepared"]]), "µs"),
        ("  server CPU µs/req, templated", summary([x["cpu_us_per_req"] for x in runs["templated"]]), "µs"),
    ], ratio(median_of(templated), median_of(prepared)), sum(x["non2xx"] for g in runs.values() for x in g)


# An OpenAPI 3.1 document written into the temp dir (nothing outside the repository is read): one GET
# operation with a path and a query parameter, a security requirement, and a $ref'd response schema with
# an example, so --validate-requests has parameters, security and a schema to check.
OPENAPI_PATH = "/pets/42?limit=10"
OPENAPI_HEADERS = {"Authorization": "Bearer bench"}
OPENAPI_DOC = {
    "openapi": "3.1.0",
    "info": {"title": "Bench pets", "version": "1"},
    "components": {
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        "schemas": {"Pet": {"type": "object", "required": ["id", "name"], "properties": {
            "id": {"type": "integer", "minimum": 1}, "name": {"type": "string", "maxLength": 40},
            "tags": {"type": "array", "items": {"type": "string"}}}}},
    },
    "security": [{"token": []}],
    "paths": {"/pets/{petId}": {"get": {
        "operationId": "getPet",
        "parameters": [
            {"name": "petId", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}},
            {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 100}}],
        "responses": {
            "200": {"description": "a pet", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Pet"},
                "example": {"id": 42, "name": "rex", "tags": ["dog", "good"]}}}},
            "404": {"description": "none"}}}}},
}


def write_openapi_doc(tmp):
    path = os.path.join(tmp, "openapi-bench.json")
    with open(path, "w") as f:
        json.dump(OPENAPI_DOC, f)
    script = os.path.join(tmp, "openapi-bench.lua")
    with open(script, "w") as f:
        f.write("".join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in OPENAPI_HEADERS.items()))
    return path, script


def measure_openapi(binary, tmp):
    """`--openapi DOC` answering a GET operation from the document (no stubs), without and with
    --validate-requests, alternated round by round; and start-up to the first 200 of that operation."""
    doc, script = write_openapi_doc(tmp)
    none = os.path.join(tmp, "openapi-no-fixtures")
    servers = {
        "plain": Ours("ours-openapi", binary, none, os.path.join(tmp, "ours-openapi"), extra=["--openapi", doc]),
        "validating": Ours("ours-openapi-validate", binary, none, os.path.join(tmp, "ours-openapi-validate"),
                           extra=["--openapi", doc, "--validate-requests"]),
    }
    for s in servers.values():
        s.start()
        wrk(s, 32, 1, path=OPENAPI_PATH, script=script)
    runs = {"plain": [], "validating": []}
    for _ in range(ROUNDS):
        for name, s in servers.items():
            runs[name].append(wrk(s, 32, DURATION, path=OPENAPI_PATH, script=script))
    for s in servers.values():
        s.stop()
    for name, extra in (("plain", ["--openapi", doc]), ("validating", ["--openapi", doc, "--validate-requests"])):
        times = []
        for i in range(STARTUP_RUNS):
            ms, _ = measure_startup(lambda: Ours("ours-openapi-startup", binary, none,
                                                 os.path.join(tmp, "openapi-startup"), extra=extra),
                                    path=OPENAPI_PATH, headers=OPENAPI_HEADERS)
            times.append(ms)
        runs["startup_" + name] = times
    return runs


def openapi_rows(runs):
    """The --openapi rows: (label, summary, unit), the validating / plain ratio and the non-2xx count."""
    plain = summary([x["rps"] for x in runs["plain"]])
    validating = summary([x["rps"] for x in runs["validating"]])
    return [
        ("req/s, --openapi GET (document answer)", plain, "req/s"),
        ("req/s, --openapi --validate-requests", validating, "req/s"),
        ("  server CPU µs/req, --openapi", summary([x["cpu_us_per_req"] for x in runs["plain"]]), "µs"),
        ("  server CPU µs/req, --validate-requests",
         summary([x["cpu_us_per_req"] for x in runs["validating"]]), "µs"),
        ("startup ms, --openapi", summary(runs["startup_plain"]), "ms-abs"),
        ("startup ms, --openapi --validate-requests", summary(runs["startup_validating"]), "ms-abs"),
    ], ratio(median_of(validating), median_of(plain)), sum(x["non2xx"] for k in ("plain", "validating")
                                                           for x in runs[k])


# Stateful mocking (WireMock's state extension, docs/stateful.md): a create-then-read cycle (a POST whose
# recordState writes a context named by the generated id, then a GET of that id through a state-matcher
# and the state helper), and the same static answer from a plain stub and from one with a state matcher.
STATE_CREATE_LUA = """
local ids = {}
request = function()
  local id = table.remove(ids)
  if id then return wrk.format("GET", "/bench/records/" .. id) end
  return wrk.format("POST", "/bench/records", {["Content-Type"] = "application/json"}, '{"name":"Aiko"}')
end
response = function(status, headers, body)
  if status == 201 then
    local id = string.match(body, '"id":"(%w+)"')
    if id then table.insert(ids, id) end
  end
end
"""


def make_state_fixtures(root):
    mappings = os.path.join(root, "mappings")
    os.makedirs(mappings, exist_ok=True)
    seg = "{{request.pathSegments.[2]}}"
    write_stub(mappings, "create.json", {
        "request": {"method": "POST", "urlPath": "/bench/records"},
        "response": {"status": 201, "headers": {"Content-Type": "application/json"},
                     "transformers": ["response-template"],
                     "body": '{"id":"{{randomValue length=16 type=\'ALPHANUMERIC\'}}",'
                             '"name":"{{jsonPath request.body \'$.name\'}}"}'},
        "serveEventListeners": [{"name": "recordState", "parameters": {
            "context": "{{jsonPath response.body '$.id'}}",
            "state": {"name": "{{jsonPath response.body '$.name'}}"}}}]})
    write_stub(mappings, "read.json", {
        "request": {"method": "GET", "urlPathPattern": "/bench/records/[^/]+",
                    "customMatcher": {"name": "state-matcher", "parameters": {"hasContext": seg}}},
        "response": {"status": 200, "headers": {"Content-Type": "application/json"},
                     "transformers": ["response-template"],
                     "body": '{"id":"' + seg + '","name":"{{state context=request.pathSegments.[2] property=\'name\'}}"}'}})
    write_stub(mappings, "seed.json", {
        "request": {"method": "PUT", "urlPath": "/bench/seed"}, "response": {"status": 204},
        "serveEventListeners": [{"name": "recordState", "parameters": {"context": "on", "state": {"x": "1"}}}]})
    write_stub(mappings, "plain.json", stub({"method": "GET", "urlPath": "/bench/plain"}))
    write_stub(mappings, "matched.json", stub({"method": "GET", "urlPath": "/bench/matched", "customMatcher": {
        "name": "state-matcher", "parameters": {"hasContext": "on"}}}))
    script = os.path.join(root, "cycle.lua")
    with open(script, "w") as f:
        f.write(STATE_CREATE_LUA)
    return root, script


def measure_state(binary, tmp):
    """Create-then-read cycles (32 connections) and a plain stub against a state-matcher stub with the same
    answer, alternated round by round (each round a fresh server, so the store starts empty)."""
    root, script = make_state_fixtures(os.path.join(tmp, "fixtures-state"))
    runs = {"cycle": [], "plain": [], "matched": []}
    for _ in range(ROUNDS):
        s = Ours("ours-state", binary, root, os.path.join(tmp, "ours-state")).start()
        req = urllib.request.Request(f"http://{HOST}:{s.port}/bench/seed", method="PUT")
        urllib.request.urlopen(req, timeout=5).read()
        for path in ("/bench/plain", "/bench/matched"):
            wrk(s, 32, 1, path=path)
        for name in ("plain", "matched"):
            runs[name].append(wrk(s, 32, DURATION, path=f"/bench/{name}"))
        runs["cycle"].append(wrk(s, 32, DURATION, path="/bench/records", script=script))
        s.stop()
    return runs


def state_rows(runs):
    """The state rows: (label, summary, unit), the state-matcher / plain ratio and the non-2xx count."""
    cycles = summary([x["rps"] / 2 for x in runs["cycle"]])
    plain = summary([x["rps"] for x in runs["plain"]])
    matched = summary([x["rps"] for x in runs["matched"]])
    return [
        ("create-then-read cycles/s (c32)", cycles, "req/s"),
        ("  server CPU µs/request, cycle", summary([x["cpu_us_per_req"] for x in runs["cycle"]]), "µs"),
        ("req/s, plain stub", plain, "req/s"),
        ("req/s, same stub + state-matcher", matched, "req/s"),
        ("  server CPU µs/req, plain", summary([x["cpu_us_per_req"] for x in runs["plain"]]), "µs"),
        ("  server CPU µs/req, state-matcher", summary([x["cpu_us_per_req"] for x in runs["matched"]]), "µs"),
    ], ratio(median_of(matched), median_of(plain)), sum(x["non2xx"] for g in runs.values() for x in g)


SSE_STREAMS = 1000


# The keys of sse_rows' and websocket_rows' figures in .build/bench.json's "ours", in their order.
SSE_KEYS = ("sse_one_eps", "sse_one_cpu_us_per_event", "sse_streams_eps", "sse_streams_cpu_us_per_event",
            "sse_kib_per_stream")
WS_KEYS = ("websocket_echo_1_rtps", "websocket_echo_1_cpu_us", "websocket_echo_1_client_cpu_pct",
           "websocket_echo_32_rtps", "websocket_echo_32_cpu_us", "websocket_echo_32_client_cpu_pct",
           "websocket_kib_per_connection", "websocket_cpu_us_per_open")


def make_sse_fixtures(root):
    """Two looping x-sse stubs: 10,000 events of 32 bytes without delays (the most one client can take; a
    pass of the list is played at most once a millisecond, so the list is long enough not to be what limits
    the rate) and one event every 100 ms (a live feed, for many open streams)."""
    mappings = os.path.join(root, "mappings")
    os.makedirs(mappings, exist_ok=True)
    data = "x" * 32
    write_stub(mappings, "fast.json", {
        "request": {"method": "GET", "urlPath": "/bench/sse/fast"},
        "response": {"status": 200, "x-sse": {"events": [{"data": data}] * 10000, "loop": True,
                                              "heartbeatMilliseconds": 0}}})
    write_stub(mappings, "feed.json", {
        "request": {"method": "GET", "urlPath": "/bench/sse/feed"},
        "response": {"status": 200, "x-sse": {"events": [
            {"data": data, "delay": {"timeUnit": "MILLISECONDS", "value": 100}}], "loop": True,
            "heartbeatMilliseconds": 0}}})
    return root


def read_sse_events(port, path, streams, seconds):
    """Opens `streams` connections to `path`, reads every one for `seconds` (one thread, selectors) and
    returns the events received per second (counted by their `data:` lines) after the first second."""
    import resource
    import selectors
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < streams + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, streams + 1024), hard))
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(streams):
        s = socket.create_connection((HOST, port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n".encode())
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, [b""])
        socks.append(s)
    marker = b"data: "
    counted = 0
    start = time.monotonic()
    warm = start + 1.0
    end = warm + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            break
        for key, _ in sel.select(timeout=0.1):
            try:
                data = key.fileobj.recv(262144)
            except BlockingIOError:
                continue
            if not data:
                sel.unregister(key.fileobj)
                continue
            tail = key.data[0]
            joined = tail + data
            n = joined.count(marker) - tail.count(marker)
            key.data[0] = joined[-(len(marker) - 1):]
            if time.monotonic() >= warm:
                counted += n
    for s in socks:
        s.close()
    sel.close()
    return counted / seconds


def measure_sse(binary, tmp):
    """x-sse events per second to one client (a looping list of 10,000 events without delays) and to
    SSE_STREAMS open streams (each one event per 100 ms), each round on a fresh server; with the server's
    CPU per event and its RSS per open stream."""
    root = make_sse_fixtures(os.path.join(tmp, "fixtures-sse"))
    runs = {"one": [], "many": []}
    for _ in range(ROUNDS):
        s = Ours("ours-sse", binary, root, os.path.join(tmp, "ours-sse")).start()
        rss_idle = s.rss_kib()
        cpu0 = sum(s.cpu())
        rate = read_sse_events(s.port, "/bench/sse/fast", 1, DURATION)
        cpu1 = sum(s.cpu())
        runs["one"].append({"eps": rate, "cpu_us": (cpu1 - cpu0) * 1e6 / max(1.0, rate * (DURATION + 1))})
        s.stop()
        s = Ours("ours-sse", binary, root, os.path.join(tmp, "ours-sse")).start()
        rss_idle = s.rss_kib()
        import threading
        peak = [0]

        def sample():
            for _ in range(int((DURATION + 1) * 10)):
                peak[0] = max(peak[0], s.rss_kib() or 0)
                time.sleep(0.1)
        t = threading.Thread(target=sample, daemon=True)
        t.start()
        cpu0 = sum(s.cpu())
        rate = read_sse_events(s.port, "/bench/sse/feed", SSE_STREAMS, DURATION)
        cpu1 = sum(s.cpu())
        t.join()
        runs["many"].append({"eps": rate, "cpu_us": (cpu1 - cpu0) * 1e6 / max(1.0, rate * (DURATION + 1)),
                             "kib_per_stream": (peak[0] - rss_idle) / SSE_STREAMS})
        s.stop()
    return runs


def sse_rows(runs):
    """The x-sse rows: (label, summary, unit), the many-streams / one-client ratio, no non-2xx count."""
    one = summary([x["eps"] for x in runs["one"]])
    many = summary([x["eps"] for x in runs["many"]])
    return [
        ("events/s, one client (no delays)", one, "req/s"),
        ("  server CPU µs/event, one client", summary([x["cpu_us"] for x in runs["one"]]), "µs"),
        (f"events/s, {SSE_STREAMS:,} open streams (10/s each)", many, "req/s"),
        ("  server CPU µs/event, open streams", summary([x["cpu_us"] for x in runs["many"]]), "µs"),
        ("  RSS KiB per open stream", summary([x["kib_per_stream"] for x in runs["many"]]), "KiB"),
    ], ratio(median_of(many), median_of(one)), 0


WS_CONNECTIONS = 1000
WS_CLIENTS = 32
WS_MESSAGE = b"x" * 32
WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def make_websocket_fixtures(root):
    """Two x-websocket stubs: an echo (one message mapping whose trigger matches any message and whose action
    sends `{{message.body}}` back) and one that sends a 32-byte text message on open (for many open
    connections)."""
    mappings = os.path.join(root, "mappings")
    os.makedirs(mappings, exist_ok=True)
    write_stub(mappings, "echo.json", {
        "request": {"method": "GET", "urlPath": "/bench/ws/echo"},
        "response": {"x-websocket": {"messageMappings": [
            {"name": "echo", "trigger": {"type": "message"},
             "actions": [{"type": "send", "message": {"body": "{{message.body}}"}}]}]}}})
    write_stub(mappings, "open.json", {
        "request": {"method": "GET", "urlPath": "/bench/ws/open"},
        "response": {"x-websocket": {"messages": [{"text": WS_MESSAGE.decode()}]}}})
    return root


def ws_client_frame(payload, opcode=0x1):
    """One final client frame (RFC 6455 §5.2), masked with a random key as clients must."""
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        length = bytes([0x80 | n])
    elif n < 65536:
        length = bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        length = bytes([0x80 | 127]) + n.to_bytes(8, "big")
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode]) + length + mask + masked


def ws_server_frame(payload, opcode=0x1):
    """The bytes of the unmasked final frame a server sends with `payload` (RFC 6455 §5.1), to compare."""
    n = len(payload)
    if n < 126:
        length = bytes([n])
    elif n < 65536:
        length = bytes([126]) + n.to_bytes(2, "big")
    else:
        length = bytes([127]) + n.to_bytes(8, "big")
    return bytes([0x80 | opcode]) + length + payload


def ws_open(port, path, timeout=10.0):
    """Connects and sends an RFC 6455 opening handshake for `path`; returns the socket (blocking, no Nagle)
    and the bytes read past the 101's head. Dies on any other answer or a wrong Sec-WebSocket-Accept."""
    import base64
    import hashlib
    key = base64.b64encode(os.urandom(16))
    s = socket.create_connection((HOST, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
              b"Connection: Upgrade\r\nSec-WebSocket-Key: " + key + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            die(f"GET {path}: the connection closed before the handshake's answer")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    accept = base64.b64encode(hashlib.sha1(key + WS_GUID).digest())
    if not head.startswith(b"HTTP/1.1 101") or b"sec-websocket-accept: " + accept.lower() not in head.lower():
        die(f"GET {path} with Upgrade: websocket was not answered 101 with the right Sec-WebSocket-Accept:\n"
            + head.decode(errors="replace"))
    return s, rest


def ws_read_exact(s, buffer, size):
    """Reads until `buffer` holds `size` bytes; returns (the first `size` bytes, the rest)."""
    while len(buffer) < size:
        chunk = s.recv(65536)
        if not chunk:
            die("a WebSocket connection closed while a message was awaited")
        buffer += chunk
    return buffer[:size], buffer[size:]


def ws_echo_rate(server, clients, seconds):
    """`clients` connections to the echo stub, each with one 32-byte text message in flight: a reply read
    (and checked) sends the next message. One thread (epoll): one warm-up second, then `seconds` counted.
    Returns {"rtps": round trips per second, "cpu_us": server CPU µs per round trip, "client_cpu_pct"}."""
    import resource
    import selectors
    frame = ws_client_frame(WS_MESSAGE)
    reply = ws_server_frame(WS_MESSAGE)
    size = len(reply)
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(clients):
        s, rest = ws_open(server.port, "/bench/ws/echo")
        if rest:
            die("the echo stub sent something before the first message")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, [b""])
        socks.append(s)
        s.send(frame)
    counted = 0
    warm = time.monotonic() + 1.0
    end = warm + seconds
    cpu0 = usage0 = None
    if clients == 1:
        # One connection: blocking send and recv, the least a client can do per round trip.
        s = socks[0]
        s.setblocking(True)
        # A kernel receive timeout (no poll before each recv, as a Python socket timeout would add).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 10, 0))
        buffer = b""
        while True:
            now = time.monotonic()
            if cpu0 is None and now >= warm:
                cpu0, usage0, t0, counted = sum(server.cpu()), resource.getrusage(resource.RUSAGE_SELF), now, 0
            if now >= end:
                break
            got, buffer = ws_read_exact(s, buffer, size)
            if got != reply:
                die(f"the echo stub answered {got!r}, not {reply!r}")
            counted += 1
            s.send(frame)
    while clients > 1:
        now = time.monotonic()
        if cpu0 is None and now >= warm:
            cpu0, usage0, t0, counted = sum(server.cpu()), resource.getrusage(resource.RUSAGE_SELF), now, 0
        if now >= end:
            break
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            if not data:
                die("a WebSocket connection to the echo stub closed")
            buffer = key.data[0] + data
            while len(buffer) >= size:
                if buffer[:size] != reply:
                    die(f"the echo stub answered {buffer[:size]!r}, not {reply!r}")
                buffer = buffer[size:]
                counted += 1
                s.send(frame)
            key.data[0] = buffer
    wall = time.monotonic() - t0
    cpu1, usage1 = sum(server.cpu()), resource.getrusage(resource.RUSAGE_SELF)
    for s in socks:
        s.close()
    sel.close()
    server.check_alive()
    client = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    return {"rtps": counted / wall, "cpu_us": (cpu1 - cpu0) * 1e6 / max(1, counted),
            "client_cpu_pct": 100.0 * client / wall}


def ws_open_many(server, count):
    """Opens `count` connections to the on-open stub and waits for each one's first message (checked);
    returns the open sockets."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1024), hard))
    first = ws_server_frame(WS_MESSAGE)
    socks = []
    for _ in range(count):
        s, rest = ws_open(server.port, "/bench/ws/open")
        got, rest = ws_read_exact(s, rest, len(first))
        if got != first or rest:
            die(f"the on-open stub sent {got + rest!r}, not {first!r}")
        socks.append(s)
    return socks


def measure_websocket(binary, tmp):
    """x-websocket stubs, each figure on a fresh server: echo round trips per second with one client and with
    WS_CLIENTS clients (one message in flight each), with the server's CPU per round trip; and the server's
    RSS per open WebSocket (WS_CONNECTIONS connections, each one's first message received)."""
    root = make_websocket_fixtures(os.path.join(tmp, "fixtures-websocket"))
    runs = {"one": [], "many": [], "open": []}
    for _ in range(ROUNDS):
        for key, clients in (("one", 1), ("many", WS_CLIENTS)):
            s = Ours("ours-websocket", binary, root, os.path.join(tmp, "ours-websocket")).start()
            runs[key].append(ws_echo_rate(s, clients, DURATION))
            s.stop()
        s = Ours("ours-websocket", binary, root, os.path.join(tmp, "ours-websocket")).start()
        # One connection first, so what the first connection initializes lazily is not counted per connection.
        for sock in ws_open_many(s, 1):
            sock.close()
        time.sleep(0.3)
        rss0, cpu0 = s.rss_kib(), sum(s.cpu())
        socks = ws_open_many(s, WS_CONNECTIONS)
        cpu1 = sum(s.cpu())
        time.sleep(0.5)
        rss1 = s.rss_kib()
        s.check_alive()
        runs["open"].append({"kib_per_connection": (rss1 - rss0) / WS_CONNECTIONS,
                             "cpu_us_per_open": (cpu1 - cpu0) * 1e6 / WS_CONNECTIONS})
        for sock in socks:
            sock.close()
        s.stop()
    return runs


def websocket_rows(runs):
    """The x-websocket rows: (label, summary, unit), the many-clients / one-client ratio, no non-2xx count."""
    one = summary([x["rtps"] for x in runs["one"]])
    many = summary([x["rtps"] for x in runs["many"]])
    return [
        ("echo round trips/s, one client", one, "req/s"),
        ("  server CPU µs/round trip, one client", summary([x["cpu_us"] for x in runs["one"]]), "µs"),
        ("  client CPU %, one client", summary([x["client_cpu_pct"] for x in runs["one"]]), "%"),
        (f"echo round trips/s, {WS_CLIENTS} clients", many, "req/s"),
        (f"  server CPU µs/round trip, {WS_CLIENTS} clients", summary([x["cpu_us"] for x in runs["many"]]), "µs"),
        (f"  client CPU %, {WS_CLIENTS} clients", summary([x["client_cpu_pct"] for x in runs["many"]]), "%"),
        (f"RSS KiB per open WebSocket ({WS_CONNECTIONS:,})",
         summary([x["kib_per_connection"] for x in runs["open"]]), "KiB"),
        ("  server CPU µs per connection opened", summary([x["cpu_us_per_open"] for x in runs["open"]]), "µs"),
    ], ratio(median_of(many), median_of(one)), 0


def median_of(s):
    return s["median"] if s else None


def ratio(a, b):
    return a / b if a is not None and b else None


# ---------------------------------------------------------------------------------------------------------
# Main


def only_matching_or_startup(only, binary, single, many, tmp):
    """BENCH_ONLY=matching: the matching-cost rows alone; BENCH_ONLY=startup: start-up with 10,000 stubs
    alone (pinned to CPU 0 as in the full run, and unpinned). Printed, nothing written."""
    if only == "matching":
        one = Ours("ours-1", binary, single, os.path.join(tmp, "ours-1")).start()
        ten = Ours("ours-10k", binary, many, os.path.join(tmp, "ours-10k")).start()
        for s in (one, ten):
            http_get_status(s.port, BENCH_PATH)
            wrk(s, 32, 1)
        wrk(ten, 32, 1, path=TEMPLATE_HIT_PATH)
        runs = {"1": [], "10k": [], "10k_template": []}
        for r in range(ROUNDS):
            runs["1"].append(wrk(one, 32, DURATION))
            runs["10k"].append(wrk(ten, 32, DURATION))
            runs["10k_template"].append(wrk(ten, 32, DURATION, path=TEMPLATE_HIT_PATH))
        one.stop()
        ten.stop()
        base = statistics.median(x["rps"] for x in runs["1"])
        for key, label in (("1", "req/s, 1 stub"), ("10k", "req/s, 10,000 stubs (literal hit)"),
                           ("10k_template", "req/s, 10,000 stubs (template hit)")):
            value = summary([x["rps"] for x in runs[key]])
            cost = 100 * (1 - value["median"] / base)
            cpu = [x["cpu_us_per_req"] for x in runs[key] if x["cpu_us_per_req"] is not None]
            cpu_text = f"{statistics.median(cpu):.2f} µs/req" if cpu else "-"
            print(f"{label:36} {fmt_summary(value, 'req/s'):>30}  cost {cost:5.1f} %  CPU {cpu_text}")
        return
    for label, cpus in (("pinned to CPU 0", SERVER_CPU), ("unpinned", "0,1")):
        times = []
        for i in range(STARTUP_RUNS):
            ms, _ = measure_startup(lambda: Ours("ours-startup-10k", binary, many, os.path.join(tmp, "startup-10k"),
                                                 cpus=cpus))
            times.append(ms)
        print(f"startup ms, 10,000 stubs, {label:16} {fmt_summary(summary(times), 'ms-abs'):>26}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", default=".build/release/mockserver")
    parser.add_argument("--output", default=".build/bench.json")
    parser.add_argument("--build-label", default="swift build -c release --product mockserver")
    args = parser.parse_args()

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        die(f"{binary} is not an executable")
    if (os.cpu_count() or 1) < 2:
        die("needs 2 CPUs")
    os.sched_setaffinity(0, {int(CLIENT_CPU)})
    started = time.monotonic()
    load_before = os.getloadavg()[0]

    tmp = tempfile.mkdtemp(prefix="mockserver-bench-")
    atexit.register(shutil.rmtree, tmp, True)
    single = make_single_stub_fixtures(os.path.join(tmp, "fixtures-1"))
    if os.environ.get("BENCH_ONLY") == "proxy":
        # Only the proxy rows (to check them quickly); nothing is written.
        rows, r, non2xx = proxy_rows(measure_proxy(binary, single, tmp))
        for label, value, unit in rows:
            print(f"{label:36} {fmt_summary(value, unit):>26}")
        print(f"proxied / alone: {r:.2f}" + (f"; {non2xx} non-2xx responses" if non2xx else ""))
        return
    if os.environ.get("BENCH_ONLY") == "store":
        # A plain stub with and without --state-store (issue 47); nothing is written.
        log(f"load average before: {load_before:.2f}; rounds={ROUNDS}, wrk {DURATION} s")
        rows, r, non2xx = store_rows(measure_store(binary, single, tmp))
        for label, value, unit in rows:
            print(f"{label:40} {fmt_summary(value, unit):>26}")
        print(f"with / without the store: {r:.2f}" + (f"; {non2xx} non-2xx responses" if non2xx else "")
              + f"; load average before {load_before:.2f}, after {os.getloadavg()[0]:.2f}")
        return
    # Row sets run alone (nothing is written): how to measure them, how to print them, the ratio's name, the
    # label column's width.
    single_sets = {
        # prepared and templated JSON
        "templating": (measure_templating, templating_rows, "templated / prepared", 36),
        # create-then-read cycles, a state-matcher's cost
        "state": (measure_state, state_rows, "state-matcher / plain", 40),
        # a generated document's GET operation
        "openapi": (measure_openapi, openapi_rows, "validating / plain", 42),
        # x-sse events to one client and to 1,000 open streams
        "sse": (measure_sse, sse_rows, "open streams / one client", 42),
        # x-websocket echo round trips (one client, 32) and RSS per open WebSocket
        "websocket": (measure_websocket, websocket_rows, f"{WS_CLIENTS} clients / one client", 42),
        # a plain stub without a session, in one, and a session's own stub
        "sessions": (measure_sessions, sessions_rows, "in a session / without", 40),
    }
    if os.environ.get("BENCH_ONLY") in single_sets:
        measure, rows_of, ratio_name, width = single_sets[os.environ["BENCH_ONLY"]]
        log(f"load average before: {load_before:.2f}; rounds={ROUNDS}, wrk {DURATION} s")
        rows, r, non2xx = rows_of(measure(binary, tmp))
        for label, value, unit in rows:
            print(f"{label:{width}} {fmt_summary(value, unit):>26}")
        print(f"{ratio_name}: {r:.2f}" + (f"; {non2xx} non-2xx responses" if non2xx else "")
              + f"; load average before {load_before:.2f}, after {os.getloadavg()[0]:.2f}")
        return
    many = make_many_stub_fixtures(os.path.join(tmp, "fixtures-10k"))
    if os.environ.get("BENCH_ONLY") in ("matching", "startup"):
        only_matching_or_startup(os.environ["BENCH_ONLY"], binary, single, many, tmp)
        return
    bundled, bundled_note = make_bundled_fixtures(os.path.join(tmp, "fixtures-bundled"), repo)
    log(f"fixtures in {tmp}; rounds={ROUNDS}, wrk {DURATION} s, ab -n {AB_REQUESTS}"
        + (" (BENCH_QUICK: figures not comparable)" if QUICK else ""))

    ours = Ours("ours", binary, single, os.path.join(tmp, "ours")).start()
    nginx = Nginx("nginx", os.path.join(tmp, "nginx")).start()
    servers = [ours, nginx]
    runs = {s.kind: {"c32": [], "c1": [], "ab": []} for s in servers}
    flags = []

    # Idle RSS: after one request (the first request warms lazily initialized state), before load.
    for s in servers:
        http_get_status(s.port, BENCH_PATH)
    time.sleep(0.3)
    idle_rss = {s.kind: s.rss_kib() for s in servers}
    idle_anon = {s.kind: s.anon_kib() for s in servers}
    for s in servers:
        s.track = [(0, idle_rss[s.kind], idle_anon[s.kind])]
    for s in servers:
        status = http_get_status(s.port, BENCH_PATH)
        if status != 200:
            flags.append(f"{s.label} answers GET {BENCH_PATH} with {status}, not 200: its figures are for that "
                         "response (wrk counts it as non-2xx)")

    log("warm-up")
    for s in servers:
        wrk(s, 32, 1)

    log("keep-alive, 32 connections")
    for r in range(ROUNDS):
        for s in servers:
            runs[s.kind]["c32"].append(wrk(s, 32, DURATION, sample_rss=True))
    log("keep-alive, 1 connection")
    for r in range(ROUNDS):
        for s in servers:
            runs[s.kind]["c1"].append(wrk(s, 1, DURATION))
    log(f"no keep-alive, ab -n {AB_REQUESTS} -c 32")
    for r in range(ROUNDS):
        for s in servers:
            runs[s.kind]["ab"].append(ab(s, AB_REQUESTS, 32))

    # RSS after JOURNAL_REQUESTS requests (the journal is on: it must stay bounded).
    log(f"RSS after {JOURNAL_REQUESTS:,} requests")
    rss_track = {}
    for s in servers:
        while s.requests_served < JOURNAL_REQUESTS:
            rps = statistics.median(x["rps"] for x in runs[s.kind]["c32"])
            left = JOURNAL_REQUESTS - s.requests_served
            seconds = max(1, min(10, int(left / max(rps, 1)) + 1))
            wrk(s, 32, seconds)
        rss_track[s.kind] = list(s.track)
    after_anon = {s.kind: s.anon_kib() for s in servers}
    load_rss = {s.kind: max(x["max_rss_kib"] for x in runs[s.kind]["c32"]) for s in servers}
    ours.stop()
    nginx.stop()

    log("matching cost: 10,000 stubs against 1")
    one = Ours("ours-1", binary, single, os.path.join(tmp, "ours-1")).start()
    ten = Ours("ours-10k", binary, many, os.path.join(tmp, "ours-10k")).start()
    for s in (one, ten):
        http_get_status(s.port, BENCH_PATH)
    time.sleep(0.3)
    idle_rss_10k = ten.rss_kib()
    for s in (one, ten):
        wrk(s, 32, 1)
    match_runs = {"1": [], "10k": [], "10k_template": []}
    for r in range(ROUNDS):
        match_runs["1"].append(wrk(one, 32, DURATION))
        match_runs["10k"].append(wrk(ten, 32, DURATION))
        match_runs["10k_template"].append(wrk(ten, 32, DURATION, path=TEMPLATE_HIT_PATH))
    one.stop()
    ten.stop()

    log("response templating: templated against prepared")
    tpl_runs = measure_templating(binary, tmp)

    log("proxy overhead: through a proxy stub against the upstream alone")
    proxy_runs = measure_proxy(binary, single, tmp)
    log("--openapi: a document's GET operation, without and with --validate-requests")
    openapi_runs = measure_openapi(binary, tmp)
    log("content matching (equalToJson, matchesJsonPath on 2 KB) and gzip")
    feat_root, post_script, gzip_script, close_script = make_feature_fixtures(os.path.join(tmp, "fixtures-features"))
    feat = Ours("ours-features", binary, feat_root, os.path.join(tmp, "ours-features")).start()
    ngz = Nginx("nginx-gzip", os.path.join(tmp, "nginx-gzip")).start()
    for path in ("/bench/literal", "/bench/equal-json", "/bench/json-path", "/bench/pact"):
        wrk(feat, 32, 1, path=path, script=post_script)
    feat_runs = {"literal": [], "equal-json": [], "json-path": [], "pact": [], "gzip": [], "nginx-gzip": []}
    for r in range(ROUNDS):
        for name in ("literal", "equal-json", "json-path", "pact"):
            feat_runs[name].append(wrk(feat, 32, DURATION, path=f"/bench/{name}", script=post_script))
        feat_runs["gzip"].append(wrk(feat, 32, DURATION, path=GZIP_PATH, script=gzip_script))
        feat_runs["nginx-gzip"].append(wrk(ngz, 32, DURATION, path=GZIP_PATH, script=gzip_script))
    feat.stop()
    ngz.stop()

    log("HTTPS (TLS 1.3, same P-256 certificate): keep-alive and a handshake per request")
    cert, key = make_certificate(os.path.join(tmp, "tls"))
    tls_ours = Ours("ours-tls", binary, single, os.path.join(tmp, "ours-tls"),
                    extra=["--https-port", "0", "--tls-cert", cert, "--tls-key", key]).start()
    tls_nginx = Nginx("nginx-tls", os.path.join(tmp, "nginx-tls"), tls=(cert, key)).start()
    tls_runs = {k: {"keepalive": [], "handshake": []} for k in ("ours", "nginx")}
    for s_ in (tls_ours, tls_nginx):
        wrk(s_, 32, 1, https=True)
    for r in range(ROUNDS):
        for s_ in (tls_ours, tls_nginx):
            tls_runs[s_.kind]["keepalive"].append(wrk(s_, 32, DURATION, https=True))
            tls_runs[s_.kind]["handshake"].append(wrk(s_, 32, DURATION, https=True, script=close_script))
    tls_ours.stop()
    tls_nginx.stop()

    log("--threads 2 against 1: server and wrk -t2 share both CPUs")
    thread_runs = {"1": [], "2": []}
    for r in range(ROUNDS):
        for n_threads in ("1", "2"):
            t = Ours(f"ours-threads-{n_threads}", binary, single, os.path.join(tmp, f"ours-threads-{n_threads}"),
                     extra=["--threads", n_threads], cpus="0,1").start()
            wrk(t, 64, 1, threads=2, client_cpus="0,1")
            thread_runs[n_threads].append(wrk(t, 64, DURATION, threads=2, client_cpus="0,1"))
            t.stop()
    log("serving with ten dashboard viewers (GET /__admin/events)")
    viewer_runs, viewer_bytes = measure_viewers(binary, single, os.path.join(tmp, "ours-viewers"))
    log("x-sse: events to one client and to 1,000 open streams")
    sse_runs = measure_sse(binary, tmp)
    log("x-websocket: echo round trips (1 and 32 clients), RSS per open WebSocket")
    websocket_runs = measure_websocket(binary, tmp)

    log(f"startup, median of {STARTUP_RUNS}")
    startup = {"ours": [], "nginx": [], "ours_10k": []}
    startup_status = {}
    for i in range(STARTUP_RUNS):
        for key, make in (
            ("ours", lambda: Ours("ours-startup", binary, bundled, os.path.join(tmp, "startup-ours"))),
            ("nginx", lambda: Nginx("nginx-startup", os.path.join(tmp, "startup-nginx"))),
            ("ours_10k", lambda: Ours("ours-startup-10k", binary, many, os.path.join(tmp, "startup-10k"))),
        ):
            ms, status = measure_startup(make)
            startup[key].append(ms)
            startup_status[key] = status
    for key, status in startup_status.items():
        if status != 200:
            flags.append(f"startup {key}: the first answer was {status}, not 200 (timed to that answer)")

    # ---- Assemble
    def pick(kind, group, field):
        return summary([x[field] for x in runs[kind][group]])

    result = {}
    for kind in ("ours", "nginx"):
        result[kind] = {
            "keepalive_rps": pick(kind, "c32", "rps"),
            "keepalive_p50_ms": pick(kind, "c32", "p50_ms"),
            "keepalive_p99_ms": pick(kind, "c32", "p99_ms"),
            "c1_rps": pick(kind, "c1", "rps"),
            "c1_p50_ms": pick(kind, "c1", "p50_ms"),
            "c1_p99_ms": pick(kind, "c1", "p99_ms"),
            "no_keepalive_rps": pick(kind, "ab", "rps"),
            "cpu_us_per_req_keepalive": pick(kind, "c32", "cpu_us_per_req"),
            "cpu_us_per_req_no_keepalive": pick(kind, "ab", "cpu_us_per_req"),
            "user_us_per_req_keepalive": pick(kind, "c32", "user_us_per_req"),
            "sys_us_per_req_keepalive": pick(kind, "c32", "sys_us_per_req"),
            "user_us_per_req_no_keepalive": pick(kind, "ab", "user_us_per_req"),
            "sys_us_per_req_no_keepalive": pick(kind, "ab", "sys_us_per_req"),
            "client_cpu_pct_keepalive": pick(kind, "c32", "client_cpu_pct"),
            "client_cpu_pct_no_keepalive": pick(kind, "ab", "client_cpu_pct"),
            "startup_ms": summary(startup[kind]),
            "rss_idle_mib": summary([idle_rss[kind] / 1024]),
            "rss_load_mib": summary([load_rss[kind] / 1024]),
            "rss_after_requests_mib": summary([rss_track[kind][-1][1] / 1024]),
            "anon_idle_mib": summary([idle_anon[kind] / 1024]),
            "anon_after_requests_mib": summary([after_anon[kind] / 1024]),
            "rss_track": [{"requests": n, "rss_kib": k, "anon_kib": a} for n, k, a in rss_track[kind]],
            "rss_half_mib": summary([_rss_at(rss_track[kind], JOURNAL_REQUESTS // 2) / 1024]),
            "non2xx": sum(x["non2xx"] for g in ("c32", "c1", "ab") for x in runs[kind][g]),
            "errors": sum(x.get("socket_errors", 0) + x.get("failed", 0)
                          for g in ("c32", "c1", "ab") for x in runs[kind][g]),
            "requests_served": rss_track[kind][-1][0],
        }
    o = result["ours"]
    o["startup_10k_ms"] = summary(startup["ours_10k"])
    o["rss_idle_10k_mib"] = summary([idle_rss_10k / 1024])
    o["match_1_rps"] = summary([x["rps"] for x in match_runs["1"]])
    o["match_10k_rps"] = summary([x["rps"] for x in match_runs["10k"]])
    o["match_10k_template_rps"] = summary([x["rps"] for x in match_runs["10k_template"]])
    o["match_non2xx"] = sum(x["non2xx"] for g in match_runs.values() for x in g)
    o["template_prepared_rps"] = summary([x["rps"] for x in tpl_runs["prepared"]])
    o["template_rendered_rps"] = summary([x["rps"] for x in tpl_runs["templated"]])
    o["template_cpu_us_per_req"] = summary([x["cpu_us_per_req"] for x in tpl_runs["templated"]])
    o["template_prepared_cpu_us_per_req"] = summary([x["cpu_us_per_req"] for x in tpl_runs["prepared"]])
    o["match_non2xx"] += sum(x["non2xx"] for g in tpl_runs.values() for x in g)
    p_rows, p_ratio, p_non2xx = proxy_rows(proxy_runs)
    o["proxy_direct_rps"], o["proxy_rps"], o["proxy_cpu_us_per_req"], o["proxy_p99_ms"] = (
        v for _, v, _ in p_rows)
    o["match_non2xx"] += p_non2xx
    oa_rows, oa_ratio, oa_non2xx = openapi_rows(openapi_runs)
    (o["openapi_rps"], o["openapi_validate_rps"], o["openapi_cpu_us_per_req"], o["openapi_validate_cpu_us_per_req"],
     o["openapi_startup_ms"], o["openapi_validate_startup_ms"]) = (v for _, v, _ in oa_rows)
    o["match_non2xx"] += oa_non2xx
    for name, key in (("literal", "post_literal"), ("equal-json", "equal_json"), ("json-path", "json_path"),
                      ("pact", "pact")):
        o[f"{key}_rps"] = summary([x["rps"] for x in feat_runs[name]])
        o[f"{key}_cpu_us_per_req"] = summary([x["cpu_us_per_req"] for x in feat_runs[name]])
    o["gzip_rps"] = summary([x["rps"] for x in feat_runs["gzip"]])
    o["gzip_cpu_us_per_req"] = summary([x["cpu_us_per_req"] for x in feat_runs["gzip"]])
    result["nginx"]["gzip_rps"] = summary([x["rps"] for x in feat_runs["nginx-gzip"]])
    result["nginx"]["gzip_cpu_us_per_req"] = summary([x["cpu_us_per_req"] for x in feat_runs["nginx-gzip"]])
    o["match_non2xx"] += sum(x["non2xx"] for g in feat_runs.values() for x in g)
    for kind in ("ours", "nginx"):
        for mode in ("keepalive", "handshake"):
            result[kind][f"tls_{mode}_rps"] = summary([x["rps"] for x in tls_runs[kind][mode]])
            result[kind][f"tls_{mode}_cpu_us_per_req"] = summary(
                [x["cpu_us_per_req"] for x in tls_runs[kind][mode]])
            result[kind]["non2xx"] += sum(x["non2xx"] for x in tls_runs[kind][mode])
    o["threads_1_rps"] = summary([x["rps"] for x in thread_runs["1"]])
    o["threads_2_rps"] = summary([x["rps"] for x in thread_runs["2"]])
    o["viewers10_rps"] = summary([x["rps"] for x in viewer_runs])
    o["viewers10_p50_ms"] = summary([x["p50_ms"] for x in viewer_runs])
    o["viewers10_p99_ms"] = summary([x["p99_ms"] for x in viewer_runs])
    o["match_1_p99_ms"] = summary([x["p99_ms"] for x in match_runs["1"]])
    o["viewers10_event_bytes"] = viewer_bytes
    o["match_non2xx"] += sum(x["non2xx"] for x in viewer_runs)
    # The streaming rows, as BENCH_ONLY=sse and BENCH_ONLY=websocket print them, under these keys.
    streaming_rows = []
    for keys, (table, _, _) in ((SSE_KEYS, sse_rows(sse_runs)), (WS_KEYS, websocket_rows(websocket_runs))):
        for key, (label, value, unit) in zip(keys, table):
            o[key] = value
            streaming_rows.append((label, key, unit, None, "", None))
    match_cost = 1 - median_of(o["match_10k_rps"]) / median_of(o["match_1_rps"])
    match_cost_t = 1 - median_of(o["match_10k_template_rps"]) / median_of(o["match_1_rps"])
    o["match_cost_pct"] = 100 * match_cost
    o["match_cost_template_pct"] = 100 * match_cost_t

    n = result["nginx"]
    ratios = {
        "keepalive_rps": ratio(median_of(o["keepalive_rps"]), median_of(n["keepalive_rps"])),
        "keepalive_p99": ratio(median_of(o["keepalive_p99_ms"]), median_of(n["keepalive_p99_ms"])),
        "no_keepalive_rps": ratio(median_of(o["no_keepalive_rps"]), median_of(n["no_keepalive_rps"])),
        "cpu_per_req_keepalive": ratio(median_of(o["cpu_us_per_req_keepalive"]),
                                       median_of(n["cpu_us_per_req_keepalive"])),
        "cpu_per_req_no_keepalive": ratio(median_of(o["cpu_us_per_req_no_keepalive"]),
                                          median_of(n["cpu_us_per_req_no_keepalive"])),
        "startup": ratio(median_of(o["startup_ms"]), median_of(n["startup_ms"])),
        "templated_vs_prepared": ratio(median_of(o["template_rendered_rps"]),
                                       median_of(o["template_prepared_rps"])),
        "proxied_vs_direct": p_ratio,
        "openapi_validate_vs_plain": oa_ratio,
        "equal_json_vs_literal": ratio(median_of(o["equal_json_rps"]), median_of(o["post_literal_rps"])),
        "json_path_vs_literal": ratio(median_of(o["json_path_rps"]), median_of(o["post_literal_rps"])),
        "pact_vs_literal": ratio(median_of(o["pact_rps"]), median_of(o["post_literal_rps"])),
        "gzip_cpu": ratio(median_of(o["gzip_cpu_us_per_req"]), median_of(n["gzip_cpu_us_per_req"])),
        "tls_handshake_rps": ratio(median_of(o["tls_handshake_rps"]), median_of(n["tls_handshake_rps"])),
        "threads_2_vs_1": ratio(median_of(o["threads_2_rps"]), median_of(o["threads_1_rps"])),
        "viewers10_rps": ratio(median_of(o["viewers10_rps"]), median_of(o["match_1_rps"])),
        "viewers10_p99": ratio(median_of(o["viewers10_p99_ms"]), median_of(o["match_1_p99_ms"])),
    }

    # Rows: label, key, unit, target text, target check (on ratio or our value).
    rss_growth = (rss_track["ours"][-1][1] - _rss_at(rss_track["ours"], JOURNAL_REQUESTS // 2)) / 1024
    rows = [
        ("keep-alive c32 req/s", "keepalive_rps", "req/s", "keepalive_rps", "≥ 1.0×", lambda r, v: r >= 1.0),
        ("keep-alive c32 p50", "keepalive_p50_ms", "ms", None, "", None),
        ("keep-alive c32 p99", "keepalive_p99_ms", "ms", "keepalive_p99", "≤ 1.5×", lambda r, v: r <= 1.5),
        ("keep-alive c1 req/s", "c1_rps", "req/s", None, "", None),
        ("keep-alive c1 p50", "c1_p50_ms", "ms", None, "", None),
        ("keep-alive c1 p99", "c1_p99_ms", "ms", None, "", None),
        ("no keep-alive (ab -c32) req/s", "no_keepalive_rps", "req/s", "no_keepalive_rps", "≥ 0.9×",
         lambda r, v: r >= 0.9),
        ("server CPU µs/req, keep-alive", "cpu_us_per_req_keepalive", "µs", "cpu_per_req_keepalive", "≤ 1.0×",
         lambda r, v: r <= 1.0),
        ("  of which user, keep-alive", "user_us_per_req_keepalive", "µs", None, "", None),
        ("  of which kernel, keep-alive", "sys_us_per_req_keepalive", "µs", None, "", None),
        ("server CPU µs/req, no keep-alive", "cpu_us_per_req_no_keepalive", "µs", "cpu_per_req_no_keepalive",
         "≤ 1.0×", lambda r, v: r <= 1.0),
        ("  of which user, no keep-alive", "user_us_per_req_no_keepalive", "µs", None, "", None),
        ("  of which kernel, no keep-alive", "sys_us_per_req_no_keepalive", "µs", None, "", None),
        ("wrk CPU % (c32; 100 = saturated)", "client_cpu_pct_keepalive", "%", None, "", None),
        ("ab CPU % (100 = saturated)", "client_cpu_pct_no_keepalive", "%", None, "", None),
        ("startup ms, bundled fixtures", "startup_ms", "ms-abs", "startup", "≤ 2.0×", lambda r, v: r <= 2.0),
        ("startup ms, 10,000 stubs", "startup_10k_ms", "ms-abs", None, "≤ 150 ms", lambda r, v: v <= 150),
        ("req/s, 1 stub", "match_1_rps", "req/s", None, "", None),
        ("req/s, 10,000 stubs (literal hit)", "match_10k_rps", "req/s", None, "", None),
        ("req/s, 10,000 stubs (template hit)", "match_10k_template_rps", "req/s", None, "", None),
        ("matching cost, 10,000 vs 1 stub %", "match_cost_pct", "%-abs", None, "≤ 10 %", lambda r, v: v <= 10),
        ("  template hit, 10,000 vs 1 stub %", "match_cost_template_pct", "%-abs", None, "≤ 10 %",
         lambda r, v: v <= 10),
        ("req/s, prepared JSON (POST)", "template_prepared_rps", "req/s", None, "", None),
        ("req/s, templated JSON (vs prepared)", "template_rendered_rps", "req/s", "templated_vs_prepared",
         "≥ 0.5×", lambda r, v: r >= 0.5),
        ("  server CPU µs/req, prepared", "template_prepared_cpu_us_per_req", "µs", None, "", None),
        ("  server CPU µs/req, templated", "template_cpu_us_per_req", "µs", None, "", None),
        ("req/s, upstream alone (proxy base)", "proxy_direct_rps", "req/s", None, "", None),
        ("req/s, through a proxy stub", "proxy_rps", "req/s", "proxied_vs_direct", "", None),
        ("  proxy server CPU µs/req", "proxy_cpu_us_per_req", "µs", None, "", None),
        ("  proxied p99", "proxy_p99_ms", "ms", None, "", None),
        ("req/s, --openapi GET (document answer)", "openapi_rps", "req/s", None, "", None),
        ("req/s, --openapi --validate-requests", "openapi_validate_rps", "req/s", "openapi_validate_vs_plain", "",
         None),
        ("  server CPU µs/req, --openapi", "openapi_cpu_us_per_req", "µs", None, "", None),
        ("  server CPU µs/req, --validate-requests", "openapi_validate_cpu_us_per_req", "µs", None, "", None),
        ("startup ms, --openapi", "openapi_startup_ms", "ms-abs", None, "", None),
        ("startup ms, --openapi --validate-requests", "openapi_validate_startup_ms", "ms-abs", None, "", None),
        ("req/s, POST literal path (baseline)", "post_literal_rps", "req/s", None, "", None),
        ("req/s, equalToJson on 2 KB (vs literal)", "equal_json_rps", "req/s", "equal_json_vs_literal", "", None),
        ("req/s, matchesJsonPath on 2 KB (vs lit.)", "json_path_rps", "req/s", "json_path_vs_literal", "", None),
        ("  server CPU µs/req, equalToJson", "equal_json_cpu_us_per_req", "µs", None, "", None),
        ("  server CPU µs/req, matchesJsonPath", "json_path_cpu_us_per_req", "µs", None, "", None),
        ("req/s, Pact interaction on 2 KB (vs lit.)", "pact_rps", "req/s", "pact_vs_literal", "", None),
        ("  server CPU µs/req, Pact interaction", "pact_cpu_us_per_req", "µs", None, "", None),
        ("gzip 2 KB JSON req/s", "gzip_rps", "req/s", None, "", None),
        ("  server CPU µs/req, gzip", "gzip_cpu_us_per_req", "µs", "gzip_cpu", "", None),
        ("HTTPS keep-alive c32 req/s", "tls_keepalive_rps", "req/s", None, "", None),
        ("  server CPU µs/req, HTTPS keep-alive", "tls_keepalive_cpu_us_per_req", "µs", None, "", None),
        ("HTTPS handshakes/s (new conn. per req)", "tls_handshake_rps", "req/s", "tls_handshake_rps", "≥ 0.9×",
         lambda r, v: r >= 0.9),
        ("  server CPU µs/handshake", "tls_handshake_cpu_us_per_req", "µs", None, "", None),
        ("req/s, --threads 1 (both CPUs shared)", "threads_1_rps", "req/s", None, "", None),
        ("req/s, --threads 2 (vs --threads 1)", "threads_2_rps", "req/s", "threads_2_vs_1", "", None),
        ("serving latency with ten viewers p99", "viewers10_p99_ms", "ms", "viewers10_p99",
         "vs 1 stub", None),
        ("  req/s with ten viewers (vs 1 stub)", "viewers10_rps", "req/s", "viewers10_rps", "", None),
    ] + streaming_rows + [
        ("RSS idle MiB", "rss_idle_mib", "MiB", None, "≤ 16 MiB", lambda r, v: v <= 16),
        ("RSS idle MiB, 10,000 stubs", "rss_idle_10k_mib", "MiB", None, "", None),
        ("RSS under load (max) MiB", "rss_load_mib", "MiB", None, "flat", None),
        (f"RSS after {JOURNAL_REQUESTS // 2:,} req MiB", "rss_half_mib", "MiB", None, "", None),
        (f"RSS after {JOURNAL_REQUESTS:,} req MiB", "rss_after_requests_mib", "MiB", None, "bounded", None),
        ("  of which private (RssAnon), idle", "anon_idle_mib", "MiB", None, "", None),
        (f"  of which private, after {JOURNAL_REQUESTS:,} req", "anon_after_requests_mib", "MiB", None, "", None),
    ]

    def cell(kind, key, unit):
        v = result[kind].get(key)
        if v is None:
            return "-", None
        if isinstance(v, dict):
            return fmt_summary(v, unit), v["median"]
        if unit == "%-abs":
            return f"{v:.1f} %", v
        return fmt_value(v, unit), v

    lines = []
    header = f"{'':36} {'ours':>26} {'nginx':>26} {'ours/nginx':>10}  {'target':<9} "
    lines.append(header)
    lines.append("-" * len(header))
    checks = []
    for label, key, unit, ratio_key, target, check in rows:
        ours_text, ours_v = cell("ours", key, unit)
        nginx_text, _ = cell("nginx", key, unit) if key in result["nginx"] else ("", None)
        r = ratios.get(ratio_key) if ratio_key else None
        if r is None and ratio_key is None and key in result["nginx"] and unit not in ("%",):
            ov, nv = result["ours"].get(key), result["nginx"].get(key)
            if isinstance(ov, dict) and isinstance(nv, dict) and nv["median"]:
                r = ov["median"] / nv["median"]
        status = ""
        if check is not None and ours_v is not None:
            ok = check(r, ours_v) if (ratio_key is None or r is not None) else False
            status = "met" if ok else "MISSED"
            checks.append((label, target, ok))
        if key == "rss_load_mib":
            growth = result["ours"]["rss_load_mib"]["median"] - result["ours"]["rss_idle_mib"]["median"]
            status = f"+{growth:.1f} MiB over idle"
        if key == "rss_after_requests_mib":
            status = f"{rss_growth:+.1f} MiB over the second half"
        rtext = f"{r:.2f}" if r is not None else ""
        lines.append(f"{label:36} {ours_text:>26} {nginx_text:>26} {rtext:>10}  {target:<9} {status}")
    table = "\n".join(lines)

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "quick": QUICK,
        "rounds": ROUNDS,
        "wrk_seconds": DURATION,
        "ab_requests": AB_REQUESTS,
        "startup_runs": STARTUP_RUNS,
        "journal_requests": JOURNAL_REQUESTS,
        "kernel": platform.release(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "load_average_at_start": load_before,
        "nginx": _version(["nginx", "-v"]),
        "bundled_fixtures": bundled_note,
        "commit": _version(["git", "-C", repo, "rev-parse", "--short", "HEAD"]),
        "build": args.build_label,
        "elapsed_s": round(time.monotonic() - started, 1),
    }
    for kind in ("ours", "nginx"):
        if result[kind]["non2xx"]:
            flags.append(f"{kind}: {result[kind]['non2xx']:,} non-2xx responses during the runs")
        if result[kind]["errors"]:
            flags.append(f"{kind}: {result[kind]['errors']:,} socket errors or failed requests")
    if o["match_non2xx"]:
        flags.append(f"matching runs: {o['match_non2xx']:,} non-2xx responses (stubs not served?)")
    if any((median_of(result[k]["client_cpu_pct_keepalive"]) or 0) > 90 for k in ("ours", "nginx")):
        flags.append("wrk saturates its core (CPU 1): keep-alive req/s is bounded by the load generator; "
                     "server CPU µs/req is the figure that compares the servers")
    if load_before > 0.5:
        flags.append(f"load average was {load_before:.2f} at start: other work on the machine adds noise")

    doc = {"ours": result["ours"], "nginx": result["nginx"], "ratios": ratios,
           "targets": {label: {"target": t, "met": ok} for label, t, ok in checks},
           "flags": flags, "meta": meta}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(doc, f, indent=2)

    print()
    print(f"MockServer vs nginx {meta['nginx']} — loopback, server on CPU {SERVER_CPU}, load generator on "
          f"CPU {CLIENT_CPU}; median of {ROUNDS} round(s) (range){'  [BENCH_QUICK]' if QUICK else ''}")
    print(f"ours: {meta['build']} (commit {meta['commit']}); journal on (default size)")
    print(f"startup: median of {STARTUP_RUNS}; bundled = {bundled_note}")
    print()
    print(table)
    print()
    met = sum(1 for _, _, ok in checks if ok)
    print(f"targets met: {met}/{len(checks)}" + ("" if met == len(checks) else "  (missed: " + ", ".join(
        label for label, _, ok in checks if not ok) + ")"))
    for flag in flags:
        print(f"note: {flag}")
    print(f"wrote {args.output} in {meta['elapsed_s']:.0f} s")


def _rss_at(track, requests):
    """VmRSS (KiB) at the first point of the track at or past `requests` served."""
    for n, rss, _ in track:
        if n >= requests:
            return rss
    return track[-1][1]


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _version(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        text = (p.stdout + p.stderr).strip()
        return text.split("/")[-1] if cmd[0] == "nginx" else text
    except (OSError, subprocess.SubprocessError):
        return None


if __name__ == "__main__":
    main()
