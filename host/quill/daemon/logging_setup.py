"""debug.log in the chain's datadir, Core's line format, and the logging rule:
request parameters are never logged, so keys and passwords cannot reach a log.
"""

import logging
import sys
import time
import traceback

# The -debug=<category> names: the part of each logger's name after "quill."
CATEGORIES = ("rpc", "http", "device", "chain", "wallet", "signing")


class CoreFormatter(logging.Formatter):
    def format(self, record):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))
        category = record.name.split(".", 1)[1] if "." in record.name else ""
        prefix = f"[{category}] " if record.levelno == logging.DEBUG and category else ""
        level = "" if record.levelno in (logging.INFO, logging.DEBUG) else f"[{record.levelname.lower()}] "
        line = f"{stamp} {level}{prefix}{record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            line += "\n" + frames(record.exc_info[1])
        return line


def frames(error: BaseException) -> str:
    """An exception's traceback as each frame's file, line, function and source line, and its
    type: never its message or a local value, which may quote request parameters (a key)."""
    listed = "".join(traceback.format_list(traceback.extract_tb(error.__traceback__)))
    return f"Traceback (most recent call last):\n{listed}{type(error).__name__}"


def setup(log_path: str | None, print_to_console: bool, debug_categories) -> None:
    root = logging.getLogger("quill")
    root.handlers.clear()
    root.propagate = False
    root.setLevel(logging.DEBUG)
    formatter = CoreFormatter()
    handlers: list[logging.Handler] = []
    if log_path:
        handlers.append(logging.FileHandler(log_path, encoding="utf-8"))
    if print_to_console:
        handlers.append(logging.StreamHandler(sys.stdout))
    wanted = set(debug_categories)
    everything = bool(wanted & {"", "1", "all"})
    # A category that is off drops its debug lines at the logger, before a record
    # is even made (the RPC server asks once per request).
    for category in CATEGORIES:
        logging.getLogger(f"quill.{category}").setLevel(
            logging.DEBUG if everything or category in wanted else logging.INFO)
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(lambda r: r.levelno > logging.DEBUG or everything
                          or r.name.split(".", 1)[-1] in wanted)
        root.addHandler(handler)
