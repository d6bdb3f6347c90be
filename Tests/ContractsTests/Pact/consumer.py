"""A consumer test written with Pact's reference implementation (pact-python, Pact FFI).

Run: python3 consumer.py OUT_DIR SPEC   (SPEC: V2, V3 or V4)
Each interaction is exercised against Pact's own mock server, then the pact file is written to
OUT_DIR/FriendsApp-FriendsAPI.json. MockServer's tests import that file and serve it.
"""

import json
import os
import sys
import urllib.request

os.environ.setdefault("PACT_DO_NOT_TRACK", "true")

from pact import Pact, match


def call(base, method, path, headers=None, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(str(base) + path, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def main():
    out, spec = sys.argv[1], sys.argv[2]
    pact = Pact("FriendsApp", "FriendsAPI").with_specification(spec)
    (
        pact.upon_receiving("a request for the friends list")
        .given("two friends exist")
        .with_request("GET", "/api/v1/friends")
        .with_header("Authorization", match.regex("Bearer demo-token", regex=r"Bearer [a-z0-9-]+"))
        .with_query_parameter("page", match.int(1))
        .will_respond_with(200)
        .with_header("Content-Type", "application/json")
        .with_body(
            {
                "status": "OK",
                "result": match.each_like(
                    {
                        "id": match.int(101),
                        "name": match.str("Aiko"),
                        "online": match.bool(True),
                        "score": match.decimal(12.5),
                        "since": match.date("2024-01-02", format="%Y-%m-%d"),
                    },
                    min=1,
                ),
            },
            content_type="application/json",
        )
    )
    (
        pact.upon_receiving("a request for a missing friend")
        .given("no friend 999")
        .with_request("GET", "/api/v1/friends/999")
        .will_respond_with(404)
        .with_body({"status": "NG", "message": match.includes("not found")}, content_type="application/json")
    )
    (
        pact.upon_receiving("a request to add a friend")
        .with_request("POST", "/api/v1/friends")
        .with_header("Content-Type", "application/json")
        .with_body({"name": match.str("Chen")}, content_type="application/json")
        .will_respond_with(201)
        .with_body({"status": "OK", "result": {"id": match.int(103), "name": "Chen"}}, content_type="application/json")
    )
    with pact.serve() as server:
        assert call(server.url, "GET", "/api/v1/friends?page=1", {"Authorization": "Bearer demo-token"})[0] == 200
        assert call(server.url, "GET", "/api/v1/friends/999")[0] == 404
        assert (
            call(server.url, "POST", "/api/v1/friends", {"Content-Type": "application/json"}, {"name": "Chen"})[0]
            == 201
        )
    pact.write_file(out, overwrite=True)


if __name__ == "__main__":
    main()
