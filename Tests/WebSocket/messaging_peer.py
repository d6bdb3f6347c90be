"""WireMock 4 messaging, played against the server for Tests/RobustnessTests/WebSocketMessagingTests.swift.

`python3 messaging_peer.py PORT SCENARIO` plays one scenario and prints one JSON object with what it saw.
WebSocket traffic goes through the `websockets` package (PyPI); admin calls are plain HTTP with
`Content-Type: application/json`. Every wait is for an event (a message, a close, a journal count the
server reports), bounded only by a generous timeout that fails the scenario rather than passing it.
"""
import asyncio
import json
import sys
import urllib.error
import urllib.request

import websockets

PORT = int(sys.argv[1])
SCENARIO = sys.argv[2]
URL = f"ws://127.0.0.1:{PORT}"
TIMEOUT = 30


def http(method, path, body=None):
    """(status, parsed JSON or text) of one HTTP request."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", method=method, data=data)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        return status, json.loads(raw or b"{}")
    except ValueError:
        return status, raw.decode("utf-8", "replace")


async def ahttp(method, path, body=None):
    return await asyncio.to_thread(http, method, path, body)


async def recv(ws):
    return await asyncio.wait_for(ws.recv(), TIMEOUT)


async def until_count(pattern, count):
    """Waits until the message journal counts `count` events matching `pattern`."""
    for _ in range(TIMEOUT * 20):
        _, answer = await ahttp("POST", "/__admin/messages/count", pattern)
        if answer.get("count", 0) >= count:
            return answer["count"]
        await asyncio.sleep(0.05)
    raise TimeoutError(f"journal never counted {count} for {pattern}")


async def wiremock_folder():
    """A fixtures folder written for WireMock 4: message-mappings/ with channel patterns, an
    http-request trigger and an http-stub trigger (restating WireMock's MessageMappingsLoaderAcceptanceTest
    and WebsocketHttpTriggerAcceptanceTest)."""
    out = {}
    async with websockets.connect(f"{URL}/ws/multi/1") as one, websockets.connect(f"{URL}/ws/multi/2") as two:
        await one.send("Hello multi stub 1")
        out["one"] = await recv(one)
        await two.send("Hello multi stub 2")
        out["two"] = await recv(two)
        # A message meant for the other channel's mapping gets nothing here: the journal says unmatched.
        await one.send("Hello multi stub 2")
        await until_count({"body": {"equalTo": "Hello multi stub 2"}}, 2)
        _, found = await ahttp("POST", "/__admin/messages/find", {"body": {"equalTo": "Hello multi stub 2"}})
        out["matched"] = sorted(e["wasMatched"] for e in found["messageServeEvents"])
    async with websockets.connect(f"{URL}/ws-notifications") as notified, \
            websockets.connect(f"{URL}/ws-broadcast-1") as b1, websockets.connect(f"{URL}/ws-broadcast-2") as b2:
        status, _ = await ahttp("GET", "/api/notify/user123")
        out["notifyStatus"] = status
        out["notified"] = await recv(notified)
        status, text = await ahttp("POST", "/api/broadcast", b"trigger")
        out["broadcastStatus"] = status
        out["broadcast"] = [await recv(b1), await recv(b2)]
        # A request no HTTP stub answers still fires an http-request trigger (WireMock's
        # messageStubTriggeredByHttpRequestPatternWorksWithoutMatchingHttpStub).
        status, _ = await ahttp("GET", "/api/no-stub")
        out["noStubStatus"] = status
        out["noStub"] = await recv(notified)
    status, _ = await ahttp("GET", "/ws-unnamed")
    out["plainGetUnnamed"] = status
    return out


async def admin():
    """The admin API over live channels (restating WireMock's WebsocketMessageJournalAcceptanceTest)."""
    out = {}
    status, created = await ahttp("POST", "/__admin/message-mappings", {
        "name": "admin echo", "metadata": {"team": "chat"},
        "trigger": {"type": "message", "channel": {"initiatingRequestPattern": {"urlPathPattern": "/live/.*"}},
                    "message": {"body": {"matches": "wait-.*"}}},
        "actions": [{"type": "send", "message": {"body": "got {{message.body}} on {{request.path}}"}}]})
    out["created"] = status
    mapping_id = created.get("id")
    _, listed = await ahttp("GET", "/__admin/message-mappings")
    out["listed"] = [m.get("name") for m in listed["messageMappings"]]
    _, by_metadata = await ahttp("POST", "/__admin/message-mappings/find-by-metadata",
                                 {"matchesJsonPath": {"expression": "$.team", "equalTo": "chat"}})
    out["foundByMetadata"] = by_metadata["meta"]["total"]
    await ahttp("DELETE", "/__admin/messages")
    async with websockets.connect(f"{URL}/live/a") as a, websockets.connect(f"{URL}/live/b") as b:
        _, channels = await ahttp("GET", "/__admin/channels")
        out["channels"] = channels["meta"]["total"]
        out["channelUrls"] = sorted(c["initiatingRequest"]["url"] for c in channels["channels"])
        await a.send("wait-1")
        out["reply"] = await recv(a)
        await a.send("wait-2")
        await a.send("unrelated")
        await recv(a)
        # wait answers the first matching event; wait-for-count the events once there are enough.
        _, single = await ahttp("POST", "/__admin/messages/wait",
                                {"pattern": {"body": {"equalTo": "wait-1"}}, "timeoutMillis": 20000})
        out["waited"] = single.get("message")
        _, many = await ahttp("POST", "/__admin/messages/wait-for-count",
                              {"pattern": {"body": {"matches": "wait-.*"}}, "count": 2, "timeoutMillis": 20000})
        out["waitedCount"] = len(many["messageServeEvents"])
        # Nothing matches: wait gives {} and wait-for-count what there is at the deadline.
        _, none = await ahttp("POST", "/__admin/messages/wait",
                              {"pattern": {"body": {"equalTo": "never"}}, "timeoutMillis": 100})
        out["waitedNone"] = none
        _, partial = await ahttp("POST", "/__admin/messages/wait-for-count",
                                 {"pattern": {"body": {"matches": "wait-.*"}}, "count": 5, "timeoutMillis": 100})
        out["partial"] = len(partial["messageServeEvents"])
        await until_count({"body": {"equalTo": "unrelated"}}, 1)
        _, counted = await ahttp("POST", "/__admin/messages/count", {
            "channel": {"urlPath": "/live/a"}, "body": {"matches": "wait-.*"}})
        out["countOnA"] = counted["count"]
        _, all_events = await ahttp("GET", "/__admin/messages")
        events = all_events["messageServeEvents"]
        out["eventTypes"] = sorted({e["eventType"] for e in events})
        received = [e for e in events if e["eventType"] == "received" and e["message"] == "wait-1"][0]
        out["receivedMapping"] = (received["wasMatched"], received.get("stubMapping", {}).get("id") == mapping_id)
        status, one = await ahttp("GET", "/__admin/messages/" + received["id"])
        out["single"] = (status, one.get("message"))
        unmatched = [e for e in events if e["message"] == "unrelated"][0]
        out["unmatched"] = unmatched["wasMatched"]
        _, removed = await ahttp("POST", "/__admin/messages/remove", {"body": {"equalTo": "unrelated"}})
        out["removed"] = len(removed["messageServeEvents"])
        _, counted = await ahttp("POST", "/__admin/messages/count", {"body": {"equalTo": "unrelated"}})
        out["afterRemove"] = counted["count"]
        # The push: texts are templates over each channel's upgrade request.
        status, sent = await ahttp("POST", "/__admin/channels/send", {
            "type": "websocket", "initiatingRequest": {"urlPath": "/live/b"},
            "message": {"body": {"data": "pushed to {{request.path}}"}}})
        out["push"] = (status, sent["channelsMessaged"], await recv(b))
        status, bad = await ahttp("POST", "/__admin/channels/send", {"type": "websocket", "message": {}})
        out["badPush"] = (status, bad["errors"][0]["detail"])
        # DELETE closes the channel with 1001.
        channel_b = [c for c in channels["channels"] if c["initiatingRequest"]["url"] == "/live/b"][0]["id"]
        status, _ = await ahttp("DELETE", "/__admin/channels/" + channel_b)
        out["deleteStatus"] = status
        try:
            await asyncio.wait_for(b.recv(), TIMEOUT)
        except websockets.ConnectionClosed as closed:
            out["closedWith"] = closed.rcvd.code if closed.rcvd else None
        status, _ = await ahttp("GET", "/__admin/channels/" + channel_b)
        out["deletedChannel"] = status
        # remove-by-metadata drops the journal's events of mappings whose metadata matches.
        _, dropped = await ahttp("POST", "/__admin/messages/remove-by-metadata",
                                 {"matchesJsonPath": {"expression": "$.team", "equalTo": "chat"}})
        out["removedByMetadata"] = len(dropped["messageServeEvents"])
        # Reset clears the message journal and runtime mappings, and closes nothing.
        await ahttp("POST", "/__admin/reset", {})
        _, after = await ahttp("GET", "/__admin/messages")
        out["afterReset"] = len(after["messageServeEvents"])
        _, listed = await ahttp("GET", "/__admin/message-mappings")
        out["mappingsAfterReset"] = listed["meta"]["total"]
        await a.send("still open")
        await until_count({"body": {"equalTo": "still open"}}, 1)
        out["openAfterReset"] = True
    status, _ = await ahttp("DELETE", "/__admin/message-mappings/" + str(mapping_id))
    out["deleteGone"] = status
    status, bad = await ahttp("POST", "/__admin/message-mappings", {
        "trigger": {"type": "http-request", "requestPattern": {"urlPath": "/x"}},
        "actions": [{"type": "send", "message": {"body": "no target"}}]})
    out["badMapping"] = (status, bad["errors"][0]["detail"])
    return out


async def reply():
    """One message to /reload/ws; the reply, or the close."""
    async with websockets.connect(f"{URL}/reload/ws") as ws:
        await ws.send("hi")
        return {"reply": await recv(ws)}


async def pile_up():
    """Messages whose mapping waits 24 h: past 1,024 waiting, the server closes with 1013."""
    async with websockets.connect(f"{URL}/pile") as ws:
        try:
            for k in range(1100):
                await ws.send(f"m{k}")
            await asyncio.wait_for(ws.recv(), TIMEOUT)
            return {"closed": None}
        except websockets.ConnectionClosed as closed:
            return {"closed": closed.rcvd.code if closed.rcvd else None,
                    "reason": closed.rcvd.reason if closed.rcvd else None}


async def slow_reader():
    """A client that never reads while 48 MiB are pushed to it: the server ends the connection (close 1008)
    instead of holding the output without bound."""
    import base64
    import os
    import socket
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", PORT))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    out = {}
    _, channels = await ahttp("GET", "/__admin/channels")
    out["before"] = channels["meta"]["total"]
    body = {"type": "websocket", "initiatingRequest": {"urlPath": "/slow"},
            "message": {"body": {"data": "x" * (1 << 20)}}}
    messaged = 0
    for _ in range(48):
        _, sent = await ahttp("POST", "/__admin/channels/send", body)
        messaged += sent["channelsMessaged"]
    out["messaged"] = messaged
    for _ in range(TIMEOUT * 20):
        _, channels = await ahttp("GET", "/__admin/channels")
        if channels["meta"]["total"] == 0:
            break
        await asyncio.sleep(0.05)
    out["after"] = channels["meta"]["total"]
    s.close()
    return out


async def main():
    scenarios = {"slow-reader": slow_reader, "wiremock-folder": wiremock_folder, "admin": admin, "reply": reply, "pile-up": pile_up}
    print(json.dumps(await scenarios[SCENARIO]()))


asyncio.run(main())
