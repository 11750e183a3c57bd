"""Core's RunCommandParseJSON (common/run_command.cpp): run the command, give it `stdin`,
read the first line of its output as JSON; a non-zero exit reports the first line of its
standard error. Quill also bounds the wait (Core waits for ever): a signer waiting for its
user longer than `timeout` is stopped."""
from __future__ import annotations

import json
import subprocess
from typing import Any

from quill.extsigner.errors import ExternalSignerError


def split_command(command: str) -> list[str]:
    """Core's subprocess::util::split: words separated by spaces or tabs, no quoting."""
    return command.replace("\t", " ").split()


def run_command_parse_json(args: list[str], stdin: str, timeout: float) -> Any:
    try:
        proc = subprocess.run(args, input=stdin.encode(), capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ExternalSignerError(f"RunCommandParseJSON error: process({' '.join(args)}) gave no answer "
                                  f"within {timeout:g} seconds") from None
    except OSError as e:
        raise ExternalSignerError(f"RunCommandParseJSON error: process({' '.join(args)}) could not start: "
                                  f"{e.strerror}") from None
    result = proc.stdout.decode(errors="replace").split("\n", 1)[0]
    error = proc.stderr.decode(errors="replace").split("\n", 1)[0]
    if proc.returncode:
        raise ExternalSignerError(f"RunCommandParseJSON error: process({' '.join(args)}) returned "
                                  f"{proc.returncode}: {error}\n")
    try:
        return json.loads(result)
    except ValueError:
        raise ExternalSignerError("Unable to parse JSON: " + result) from None
