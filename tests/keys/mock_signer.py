"""A scripted external signer for error-path tests: `python mock_signer.py SCRIPT <Core's arguments>`.
SCRIPT is a JSON file {command: {"stdout": text, "stderr": text, "exit": n}} read at each call
(command: enumerate, getdescriptors, displayaddress or signtx), so that a test changes the
answers while quilld and Core keep their -signer."""
from __future__ import annotations

import json
import sys
from pathlib import Path

COMMANDS = ("enumerate", "getdescriptors", "displayaddress", "signtx")


def main() -> int:
    words = sys.argv[2:] + (sys.stdin.read().split() if "--stdin" in sys.argv else [])
    command = next((w for w in words if w in COMMANDS), "")
    answer = json.loads(Path(sys.argv[1]).read_text()).get(command, {})
    sys.stdout.write(answer.get("stdout", ""))
    sys.stderr.write(answer.get("stderr", ""))
    return int(answer.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
