"""quilld killed by SIGKILL at a chosen instant (tests only): just before the spender index's second
catch-up batch commits, so the first batch is on disk and the second is not.

    python -m tests.chain.index_killed_quilld <quilld options>
"""
import os
import signal
import sys
import threading

from quill import atomic_store
from quill.chain import spender_index
from quill.daemon.main import main


def arm() -> None:
    commits = 0

    def kill_before_the_second_batch(path: str) -> None:
        nonlocal commits
        if threading.current_thread().name == spender_index.NAME:
            commits += 1
            if commits == 2:
                os.kill(os.getpid(), signal.SIGKILL)
    atomic_store.fault_injection = kill_before_the_second_batch


if __name__ == "__main__":
    arm()
    sys.exit(main(sys.argv[1:]))
