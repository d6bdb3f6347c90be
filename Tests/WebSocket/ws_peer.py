"""An independent WebSocket peer for Tests/RobustnessTests/WebSocketTests.swift.

`python3 ws_peer.py PORT SCENARIO` plays one scenario against the server and prints one JSON object with
what it saw. Well-formed traffic goes through the `websockets` package (PyPI), a client written from
RFC 6455 by others; protocol violations (an unmasked frame, invalid UTF-8, an oversized message) are
written by hand on a raw socket, since a conforming client cannot send them.
"""
import asyncio
import base64
import json
import os
import socket
import struct
import sys

import websockets

PORT = int(sys.argv[1])
SCENARIO = sys.argv[2]
URL = f"ws://127.0.0.1:{PORT}"


def raw_handshake(path="/ws/chat?room=lobby", key="dGhlIHNhbXBsZSBub25jZQ==", extra=""):
    """Opens a socket, sends an opening handshake, returns (socket, response head text)."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    s.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            break
        head += chunk
    return s, head.decode("latin-1")


def frame(opcode, payload, masked=True, fin=True):
    """A frame as RFC 6455 §5.2 lays it out."""
    first = (0x80 if fin else 0) | opcode
    n = len(payload)
    mask_bit = 0x80 if masked else 0
    if n < 126:
        header = struct.pack("!BB", first, mask_bit | n)
    elif n < 65536:
        header = struct.pack("!BBH", first, mask_bit | 126, n)
    else:
        header = struct.pack("!BBQ", first, mask_bit | 127, n)
    if not masked:
        return header + payload
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def read_frames_until_close(s):
    """Reads server frames until a close frame or EOF; returns (list of (opcode, payload), eof_after)."""
    data = b""
    frames = []
    s.settimeout(10)
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return frames, False
        if not chunk:
            return frames, True
        data += chunk
        while len(data) >= 2:
            opcode = data[0] & 0x0F
            n = data[1] & 0x7F
            offset = 2
            if n == 126:
                n = struct.unpack("!H", data[2:4])[0]
                offset = 4
            elif n == 127:
                n = struct.unpack("!Q", data[2:10])[0]
                offset = 10
            if len(data) < offset + n:
                break
            frames.append((opcode, data[offset : offset + n], bool(data[1] & 0x80)))
            data = data[offset + n :]
            if opcode == 8:
                # After the close frame the server closes TCP.
                rest = s.recv(1)
                return frames, rest == b""


def close_code(frames):
    for opcode, payload, _ in frames:
        if opcode == 8 and len(payload) >= 2:
            return struct.unpack("!H", payload[:2])[0]
    return None


async def chat():
    out = {}
    async with websockets.connect(f"{URL}/ws/chat?room=lobby", subprotocols=["chat.v1"]) as ws:
        out["subprotocol"] = ws.subprotocol
        out["headers"] = {"X-Chat-Server": ws.response.headers.get("X-Chat-Server")}
        out["open"] = [await ws.recv() for _ in range(3)]
        out["open"][1] = base64.b64encode(out["open"][1]).decode()
        replies = []
        for message in ["hello", "ping", '{"op":"join","user":"ann"}']:
            await ws.send(message)
            replies.append(await ws.recv())
        await ws.send(bytes([0, 1, 2, 255]))
        replies.append(base64.b64encode(await ws.recv()).decode())
        # A fragmented message, with a ping between its fragments (websockets sends a ping frame at once).
        async def fragments():
            yield "frag"
            await ws.ping(b"between")
            yield "mented"
        await ws.send(fragments())
        replies.append(await ws.recv())
        pong = await ws.ping(b"x")
        await asyncio.wait_for(pong, 10)
        out["pong"] = True
        await ws.send("bye")
        replies.append(await ws.recv())
        out["replies"] = replies
        try:
            await ws.recv()
        except websockets.ConnectionClosed as e:
            out["close"] = [e.rcvd.code, e.rcvd.reason] if e.rcvd else None
    return out


async def no_subprotocol():
    async with websockets.connect(f"{URL}/ws/chat?room=x") as ws:
        return {"subprotocol": ws.subprotocol}


async def client_close():
    async with websockets.connect(f"{URL}/ws/chat?room=x") as ws:
        for _ in range(3):
            await ws.recv()
        await ws.close(code=4001, reason="done here")
        return {"sent": [ws.protocol.close_sent.code, ws.protocol.close_sent.reason], "received": [ws.protocol.close_rcvd.code]}


async def server_close():
    async with websockets.connect(f"{URL}/ws/closing") as ws:
        messages = []
        try:
            while True:
                messages.append(await ws.recv())
        except websockets.ConnectionClosed as e:
            return {"messages": messages, "close": [e.rcvd.code, e.rcvd.reason]}


def accept():
    s, head = raw_handshake()
    s.close()
    return {"head": head}


def violation(kind):
    s, head = raw_handshake()
    if kind == "unmasked":
        s.sendall(frame(1, b"hello", masked=False))
    elif kind == "utf8":
        s.sendall(frame(1, b"\xc3\x28"))
    elif kind == "too-large":
        s.sendall(frame(2, b"x" * 2000))
    frames, eof = read_frames_until_close(s)
    s.close()
    return {"status": head.split("\r\n")[0], "close": close_code(frames), "eof": eof,
            "masked": [m for _, _, m in frames]}


async def main():
    if SCENARIO == "chat":
        result = await chat()
    elif SCENARIO == "no-subprotocol":
        result = await no_subprotocol()
    elif SCENARIO == "client-close":
        result = await client_close()
    elif SCENARIO == "server-close":
        result = await server_close()
    elif SCENARIO == "accept":
        result = accept()
    else:
        result = violation(SCENARIO)
    print(json.dumps(result))


asyncio.run(main())
