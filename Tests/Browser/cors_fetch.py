#!/usr/bin/env python3
"""Drives headless Chromium through chromedriver's WebDriver HTTP API (W3C WebDriver, standard library only).

Usage: cors_fetch.py PAGE_URL SCRIPT_FILE
Opens PAGE_URL (served from one origin) and runs SCRIPT_FILE there as an asynchronous WebDriver script (its
last argument is the callback). Prints the script's result as one JSON line. Exit 0 when the browser ran
the script, 3 when Chromium or chromedriver is missing, 1 on any other failure.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None, timeout=60):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read().decode() or "null")


def main():
    page_url, script_file = sys.argv[1], sys.argv[2]
    driver = shutil.which("chromedriver")
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not driver or not browser:
        print(json.dumps({"error": "chromium or chromedriver not installed"}))
        return 3
    script = open(script_file).read()
    port = free_port()
    profile = tempfile.mkdtemp(prefix="mockserver-chromium-")
    process = subprocess.Popen([driver, "--port=%d" % port], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    base = "http://127.0.0.1:%d" % port
    session = None
    try:
        deadline = time.time() + 30
        while True:
            try:
                if call(base, "GET", "/status", timeout=5)["value"].get("ready"):
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("chromedriver did not become ready")
            time.sleep(0.1)
        capabilities = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": browser, "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--user-data-dir=" + profile]}}}}
        session = call(base, "POST", "/session", capabilities, timeout=120)["value"]["sessionId"]
        call(base, "POST", "/session/%s/timeouts" % session, {"script": 30000})
        call(base, "POST", "/session/%s/url" % session, {"url": page_url})
        result = call(base, "POST", "/session/%s/execute/async" % session, {"script": script, "args": []})
        print(json.dumps(result["value"]))
        return 0
    except Exception as error:  # reported to the Swift test as one JSON line
        print(json.dumps({"error": "%s: %s" % (type(error).__name__, error)}))
        return 1
    finally:
        if session:
            try:
                call(base, "DELETE", "/session/%s" % session, timeout=30)
            except Exception:
                pass
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
