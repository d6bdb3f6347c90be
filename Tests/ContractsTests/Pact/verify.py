"""Verifies pact files against a running provider with Pact's reference verifier (pact-python, Pact FFI).

Run: python3 verify.py PROVIDER_NAME BASE_URL PACT_FILE...
Exit code 0 when every interaction is honoured, 1 otherwise (the verifier's report is printed).
"""

import os
import sys
from urllib.parse import urlparse

os.environ.setdefault("PACT_DO_NOT_TRACK", "true")

from pact import Verifier


def main():
    name, url, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    verifier = Verifier(name, host=urlparse(url).hostname).add_transport(url=url)
    for f in files:
        verifier.add_source(f)
    try:
        verifier.verify()
    except Exception as error:  # the verifier raises on any mismatch
        print(f"verification failed: {error}", file=sys.stderr)
        sys.exit(1)
    print("verification passed")


if __name__ == "__main__":
    main()
