"""Checks request-matching cases against Pact's own mock server (the Rust core via pact-python's FFI).

Run: python3 reference_match.py CASES.json [--only ID]

CASES.json has the layout of compatibility-cases.json: each case holds a pact with one
interaction and a request to send. For every case this script

  1. rebuilds the interaction in a Pact FFI pact handle (spec version, method, path, query,
     headers, exact body bytes, matching rules), writes the handle back out and compares the
     written request with the case's request as a fidelity check;
  2. starts Pact's mock server for it on 127.0.0.1 (random port);
  3. sends the case's request over a real socket with http.client (raw query string as given,
     headers in order with repeats, exact body bytes);
  4. reads the status and the mock server's mismatch report from the FFI, then shuts it down.

The outcome is "match" when the mock server answered with the interaction's response and
recorded no mismatch, otherwise "mismatch". It prints one JSON object on stdout:

  {"results": {"<id>": {"outcome": "match" | "mismatch", "detail": "..."}}}

A case that cannot be run at all (the FFI rejects it) gets outcome "error" with the reason.
It does not compare outcomes with each case's "expect" (the caller does) and exits 0 whenever
it could run; exit 2 means setup failed (pact-python missing, unreadable file, unknown id).
Requires Python 3.11+, the standard library and pact-python >= 3 (its bundled Pact FFI).
"""

import base64
import binascii
import gc
import http.client
import json
import os
import shutil
import sys
import tempfile
import urllib.parse

os.environ.setdefault("PACT_DO_NOT_TRACK", "true")


def load_ffi():
    """The FFI wrapper shipped with pact-python: pact_ffi (pact-python 4) or pact.v3.ffi (3.x)."""
    try:
        import pact_ffi as ffi  # pact-python >= 4 depends on pact-python-ffi
    except ImportError:
        from pact.v3 import ffi  # pact-python 3.x
    needed = ["new_pact", "with_specification", "new_interaction", "with_request",
              "with_query_parameter_v2", "with_header_v2", "with_binary_body", "with_matching_rules",
              "response_status", "pact_handle_write_file", "create_mock_server_for_transport",
              "mock_server_mismatches", "PactSpecification", "InteractionPart"]
    missing = [n for n in needed if not hasattr(ffi, n)]
    if missing:
        raise ImportError("pact FFI wrapper lacks " + ", ".join(missing))
    return ffi


# ----------------------------------------------------------------- reading the pact like Pact does

def parse_content_type(value):
    if not value:
        return None
    return value.split(";", 1)[0].strip().lower()


def is_json_type(ct):
    if not ct or "/" not in ct:
        return False
    main, sub = ct.split("/", 1)
    return main == "application" and (sub.startswith("json") or sub.endswith("+json") or sub == "graphql")


def is_text_type(ct):
    if not ct or "/" not in ct:
        return False
    main, sub = ct.split("/", 1)
    xml = main in ("application", "text") and (sub == "xml" or sub.endswith("+xml"))
    return main == "text" or xml or is_json_type(ct) or ct == "application/x-www-form-urlencoded"


def header_lookup(headers, name):
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value[0] if isinstance(value, list) else value
    return None


def decode_b64(text):
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def body_v1_v3(request):
    """(bytes, content type) for a V1-V3 request body, or None when absent."""
    if "body" not in request or request["body"] is None:
        return None
    value = request["body"]
    ct_header = header_lookup(request.get("headers"), "content-type")
    ct = parse_content_type(ct_header)
    if isinstance(value, str):
        if value == "":
            return b"", ct_header
        if ct is None:
            ct_header = ct = "text/plain"
        if is_json_type(ct):
            try:
                json.loads(value)
                return value.encode(), ct_header
            except ValueError:
                return json.dumps(value).encode(), ct_header
        if is_text_type(ct):
            return value.encode(), ct_header
        decoded = decode_b64(value)  # binary bodies are written base64 encoded
        return (decoded if decoded is not None else value.encode()), ct_header
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(), ct_header or "application/json"


def body_v4(request):
    body = request.get("body")
    if not isinstance(body, dict) or body.get("content") is None:
        return None
    content = body["content"]
    ct_header = body.get("contentType") or header_lookup(request.get("headers"), "content-type")
    encoded = body.get("encoded", False)
    if encoded and str(encoded).lower() == "base64":
        return base64.b64decode(content), ct_header
    if isinstance(content, str) and not is_json_type(parse_content_type(ct_header)):
        return content.encode(), ct_header
    if isinstance(content, str) and content == "":
        return b"", ct_header
    return json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode(), ct_header or "application/json"


def major_version(case, pact):
    version = str(pact.get("metadata", {}).get("pactSpecification", {}).get("version", case.get("spec", 3)))
    return int(version.split(".")[0])


def build(ffi, case):
    """A pact handle holding the case's single interaction. Returns (handle, spec, request json)."""
    pact = case["pact"]
    spec = major_version(case, pact)
    (interaction,) = pact["interactions"]
    request = interaction["request"]
    versions = {1: ffi.PactSpecification.V1, 2: ffi.PactSpecification.V2,
                3: ffi.PactSpecification.V3, 4: ffi.PactSpecification.V4}
    part = ffi.InteractionPart.REQUEST

    handle = ffi.new_pact(pact.get("consumer", {}).get("name", "consumer"),
                          pact.get("provider", {}).get("name", "provider"))
    ffi.with_specification(handle, versions[spec])
    it = ffi.new_interaction(handle, interaction.get("description", case["id"]))
    ffi.with_request(it, request.get("method", "GET"), request.get("path", "/"))

    query = request.get("query")
    if isinstance(query, str):
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        grouped = {}
        for k, v in pairs:
            grouped.setdefault(k, []).append(v)
        query = grouped
    for name, values in (query or {}).items():
        for i, v in enumerate(values if isinstance(values, list) else [values]):
            ffi.with_query_parameter_v2(it, name, i, v)

    # body first: it adds a Content-Type header, which the headers below then set exactly
    body = body_v4(request) if spec >= 4 else body_v1_v3(request)
    if body is not None:
        ffi.with_binary_body(it, part, body[1], body[0])

    for name, values in (request.get("headers") or {}).items():
        values = values if isinstance(values, list) else [values]
        for i, v in enumerate(values):
            ffi.with_header_v2(it, part, name, i, v)

    if request.get("matchingRules"):
        ffi.with_matching_rules(it, part, json.dumps(request["matchingRules"]))
    if request.get("generators") and hasattr(ffi, "with_generators"):
        ffi.with_generators(it, part, json.dumps(request["generators"]))

    ffi.response_status(it, int(interaction.get("response", {}).get("status", 200)))
    return handle, spec, request


def written_request(ffi, handle):
    """The request as Pact writes it back from the handle."""
    directory = tempfile.mkdtemp(prefix="pact-ref-")
    try:
        ffi.pact_handle_write_file(handle, directory, overwrite=True)
        (name,) = [n for n in os.listdir(directory) if n.endswith(".json")]
        with open(os.path.join(directory, name), encoding="utf-8") as fh:
            return json.load(fh)["interactions"][0]["request"]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# ----------------------------------------------------------------- sending and judging

def send(port, request):
    target = request.get("path", "/")
    if request.get("query"):
        target += "?" + request["query"]
    body = request.get("body")
    data = None
    if body is not None:
        data = base64.b64decode(body["base64"]) if "base64" in body else body["text"].encode("utf-8")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.putrequest(request.get("method", "GET"), target, skip_accept_encoding=True)
        for name, value in request.get("headers", []):
            conn.putheader(name, value)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        response = conn.getresponse()
        payload = response.read()
        return response.status, payload
    finally:
        conn.close()


def describe(mismatches):
    parts = []
    for m in mismatches:
        kind = m.get("type", "?")
        if kind == "request-mismatch":
            inner = "; ".join(f"{x.get('type', '?')}: {x.get('mismatch') or x.get('description') or json.dumps(x)}"
                              for x in m.get("mismatches", []))
            parts.append(f"request-mismatch {m.get('method', '')} {m.get('path', '')}: {inner}")
        elif kind == "request-not-found":
            req = m.get("request", {})
            parts.append(f"request-not-found {m.get('method', req.get('method', ''))} {m.get('path', req.get('path', ''))}")
        elif kind == "missing-request":
            continue  # the interaction was not matched; the reason is in the other entries
        else:
            parts.append(json.dumps(m, sort_keys=True))
    return " | ".join(parts)


def run_case(ffi, case):
    handle, spec, request = build(ffi, case)
    notes = []
    try:
        if written_request(ffi, handle) != request:
            notes.append("note: Pact writes this request differently from the case's pact")
    except Exception as error:  # the check is informative only
        notes.append(f"note: could not write the pact back ({error})")
    expected_status = int(case["pact"]["interactions"][0].get("response", {}).get("status", 200))
    server = ffi.create_mock_server_for_transport(handle, "127.0.0.1", 0, "http", None)
    try:
        status, payload = send(server.port, case["request"])
        mismatches = ffi.mock_server_mismatches(server)
    finally:
        del server  # its finaliser shuts the mock server down
        gc.collect()
    del handle  # its finaliser frees the pact handle
    gc.collect()

    reported = [m for m in mismatches if m.get("type") != "missing-request"]
    if status == expected_status and not reported:
        outcome, detail = "match", f"HTTP {status}"
    else:
        outcome = "mismatch"
        detail = f"HTTP {status}; " + (describe(mismatches) or payload.decode("utf-8", "replace")[:300])
        if status == expected_status:
            detail += " (answered the interaction's status but mismatches were recorded)"
    if notes:
        detail += " [" + "; ".join(notes) + "]"
    return {"outcome": outcome, "detail": detail}


def main(argv):
    args = argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        if i + 1 >= len(args):
            print("usage: reference_match.py CASES.json [--only ID]", file=sys.stderr)
            return 2
        only = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print("usage: reference_match.py CASES.json [--only ID]", file=sys.stderr)
        return 2
    try:
        ffi = load_ffi()
    except ImportError as error:
        print(f"setup failed: pact-python with its FFI is needed ({error})", file=sys.stderr)
        return 2
    try:
        with open(args[0], encoding="utf-8") as fh:
            cases = json.load(fh)["cases"]
    except (OSError, ValueError, KeyError) as error:
        print(f"setup failed: cannot read cases from {args[0]} ({error})", file=sys.stderr)
        return 2
    if only is not None:
        cases = [c for c in cases if c.get("id") == only]
        if not cases:
            print(f"setup failed: no case with id {only}", file=sys.stderr)
            return 2

    results = {}
    for case in cases:
        try:
            results[case["id"]] = run_case(ffi, case)
        except Exception as error:  # report per case, keep going
            results[case["id"]] = {"outcome": "error", "detail": f"{type(error).__name__}: {error}"}
    json.dump({"results": results}, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
