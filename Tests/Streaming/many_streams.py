#!/usr/bin/env python3
"""Issue 45: thousands of open streams on one event loop.

Usage: many_streams.py PORT PID [WEBSOCKETS] [STREAMS]   (defaults 2000 and 2000)

Against a mockserver (one event loop, `--threads 1`) serving `GET /many/ws` (an `x-websocket` stub that sends
"hi" on open and stays open) and `GET /many/sse` (an `x-sse` stub whose one event is sent at once and that
stays open, `closeConnection: false`), opens WEBSOCKETS WebSocket connections (Python's `websockets`, an
independent RFC 6455 client) and STREAMS event streams (raw sockets, HTTP/1.1 chunked), all at once. Checks
every one got its first message or event, reads the server's resident memory (/proc/PID/status) before and
after each batch, then sends the server SIGTERM and checks every WebSocket was closed with 1001 (going away,
RFC 6455 §7.4.1) and every event stream ended properly (the last chunk) before the server exited.

Prints one JSON line: counts, bytes of RSS per WebSocket and per stream. Exit 0 when every check passes.
"""
import asyncio
import json
import os
import signal
import sys

import websockets


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def open_websocket(port, gate, sockets, failures):
    async with gate:
        try:
            ws = await websockets.connect("ws://127.0.0.1:%d/many/ws" % port, open_timeout=120,
                                          ping_interval=None, close_timeout=60, max_size=1 << 20)
            first = await asyncio.wait_for(ws.recv(), 120)
            if first != "hi":
                failures.append("ws first message %r" % first)
            sockets.append(ws)
        except Exception as e:  # noqa: BLE001 - reported, not swallowed
            failures.append("ws open: %r" % e)


async def open_stream(port, gate, streams, failures):
    async with gate:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /many/sse HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 120)
            if not head.startswith(b"HTTP/1.1 200") or b"chunked" not in head.lower():
                failures.append("sse head %r" % head[:80])
            body = b""
            while b"data: tick" not in body:
                chunk = await asyncio.wait_for(reader.read(4096), 120)
                if not chunk:
                    failures.append("sse ended before its event")
                    break
                body += chunk
            streams.append((reader, writer, body))
        except Exception as e:  # noqa: BLE001
            failures.append("sse open: %r" % e)


async def ended_properly(reader, body):
    """True when the chunked stream reaches its last chunk before the connection closes."""
    while True:
        if b"\r\n0\r\n\r\n" in body or body.startswith(b"0\r\n\r\n"):
            return True
        chunk = await reader.read(4096)
        if not chunk:
            return False
        body += chunk


async def main():
    port, pid = int(sys.argv[1]), int(sys.argv[2])
    count_ws = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    count_sse = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    failures = []
    gate = asyncio.Semaphore(100)
    base = rss(pid)
    sockets = []
    await asyncio.gather(*(open_websocket(port, gate, sockets, failures) for _ in range(count_ws)))
    after_ws = rss(pid)
    streams = []
    await asyncio.gather(*(open_stream(port, gate, streams, failures) for _ in range(count_sse)))
    after_sse = rss(pid)
    os.kill(pid, signal.SIGTERM)
    codes = await asyncio.gather(*(asyncio.wait_for(ws.wait_closed(), 120) for ws in sockets),
                                 return_exceptions=True)
    going_away = sum(1 for ws in sockets if ws.close_code == 1001)
    ended = await asyncio.gather(*(asyncio.wait_for(ended_properly(r, b), 120) for r, _, b in streams),
                                 return_exceptions=True)
    ended_count = sum(1 for e in ended if e is True)
    for _, writer, _ in streams:
        writer.close()
    result = {
        "websockets": len(sockets), "streams": len(streams),
        "closedWith1001": going_away, "streamsEnded": ended_count,
        "rssPerWebSocketBytes": (after_ws - base) // max(1, len(sockets)),
        "rssPerStreamBytes": (after_sse - after_ws) // max(1, len(streams)),
        "rssBytes": [base, after_ws, after_sse],
        "failures": failures[:10] + [repr(c) for c in codes if isinstance(c, Exception)][:5],
    }
    print(json.dumps(result))
    ok = (len(sockets) == count_ws and len(streams) == count_sse and going_away == count_ws
          and ended_count == count_sse and not failures)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
