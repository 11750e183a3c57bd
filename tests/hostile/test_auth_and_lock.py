"""Who may use a data directory and the RPC port (issue 15): one daemon per data
directory (Core's .lock), and wrong passwords answered one at a time."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from quill.tx.address import encode_segwit_address
from tests.hostile.netkit import basic, head, post, read_reply
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure

DELAY_MS = 40


def test_a_second_daemon_on_the_same_datadir_refuses_to_start(tmp_path: Path) -> None:
    with QuillDaemon(tmp_path) as first:
        cookie = (first.chain_dir / ".cookie").read_text()
        second = QuillDaemon(tmp_path, wait=False).start()
        assert second.proc.wait(30) == 1
        assert second.proc.stderr is not None
        err = second.proc.stderr.read().decode()
        assert err.strip() == (f"Error: Cannot obtain a lock on directory {first.chain_dir}. "
                               "Quill is probably already running.")
        second.stop()
        # the first one is untouched: same cookie, still answering, chain writable
        assert (first.chain_dir / ".cookie").read_text() == cookie
        assert first.rpc("getblockcount") == 0
        address = encode_segwit_address("bcrt", 0, bytes(range(20)))
        assert len(first.rpc("generatetoaddress", 2, address)) == 2
        assert not (first.chain_dir / "debug.log").read_text().count("Cannot obtain a lock")


def test_a_killed_daemon_leaves_no_stale_lock(tmp_path: Path) -> None:
    first = QuillDaemon(tmp_path).start()
    assert first.proc is not None
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait(10)
    assert (first.chain_dir / ".lock").exists()
    with QuillDaemon(tmp_path) as again:
        assert again.rpc("getblockcount") == 0
    if first.proc.stderr:
        first.proc.stderr.close()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    with QuillDaemon(tmp_path_factory.mktemp("auth"), "-rpcuser=u", "-rpcpassword=p",
                     f"-rpcauthfailuredelay={DELAY_MS}") as d:
        yield d


def test_parallel_wrong_passwords_are_serialised(daemon: QuillDaemon) -> None:
    statuses: list[int] = []
    good_latency: list[float] = []

    def guess(i: int) -> None:
        statuses.append(post(daemon.port, b'{"id":1,"method":"uptime"}', basic("u", f"guess{i}"))[0])

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(50)]
    started = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(0.2)
    t0 = time.monotonic()   # the right password is not queued behind the guesses
    assert post(daemon.port, b'{"id":1,"method":"uptime"}', basic("u", "p"))[0] == 200
    good_latency.append(time.monotonic() - t0)
    for t in threads:
        t.join(60)
    elapsed = time.monotonic() - started
    assert statuses == [401] * 50
    assert elapsed >= 50 * DELAY_MS / 1000, f"50 parallel guesses took {elapsed:.2f} s"
    assert good_latency[0] < 0.5


def test_allowip_is_checked_before_anything_else(tmp_path: Path) -> None:
    """A peer outside -rpcallowip gets 403 on the headers alone, even with a body announced."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            addr = s.getsockname()[0]
    except OSError:
        addr = "127.0.0.1"
    if addr.startswith("127."):
        pytest.skip("this machine has no non-loopback IPv4 address to connect from")
    with QuillDaemon(tmp_path, "-rpcbind=0.0.0.0", "-rpcallowip=203.0.113.0/24") as d:
        with socket.create_connection((addr, d.port), timeout=10) as s:
            s.sendall(head(30 << 20, None))   # no credentials, 30 MB announced, none sent
            assert read_reply(s) == (403, b"")
        assert "rejected: Client network is not allowed RPC access" in d.debug_log()
    assert os.path.exists(tmp_path)


@pytest.mark.sqlite_store("a wallet file outside the data directory, locked by the daemon that opened it; in "
                          "PostgreSQL every quilld on the database shares the wallets (tests/wallet_pg)")
def test_a_wallet_directory_is_used_by_one_daemon(tmp_path: Path) -> None:
    """Wallets may live outside the data directory (an absolute name): each is locked too."""
    shared = str(tmp_path / "shared-wallet")
    in_use = ("Wallet file verification failed. SQLiteDatabase: Unable to obtain an exclusive lock on the "
              "database, is it being used by another instance of Quill?")
    with QuillDaemon(tmp_path / "a") as first, QuillDaemon(tmp_path / "b") as second:
        assert first.rpc("createwallet", shared, True) == {"name": shared}
        with pytest.raises(RPCFailure) as refused:
            second.rpc("loadwallet", shared)
        assert (refused.value.code, refused.value.message) == (-4, in_use)
        first.rpc("unloadwallet", shared)
        assert second.rpc("loadwallet", shared) == {"name": shared}
        with pytest.raises(RPCFailure) as refused:
            first.rpc("loadwallet", shared)
        assert refused.value.message == in_use


def test_guessers_that_left_cost_the_next_typo_nothing(tmp_path: Path) -> None:
    """Issue 24: 500 clients send a wrong password and close at once. Their delays left with
    them, so the next legitimate typo waits about one delay (it waited 500 x 250 ms = 125 s)."""
    delay = 0.25
    with QuillDaemon(tmp_path, "-rpcuser=u", "-rpcpassword=p", f"-rpcauthfailuredelay={int(delay * 1000)}") as d:
        wrong = head(27, basic("u", "guess")) + b'{"id":1,"method":"uptime"}'
        for _ in range(500):
            with socket.create_connection(("127.0.0.1", d.port), timeout=10) as s:
                s.sendall(wrong)
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", d.port), timeout=30) as s:
            s.sendall(head(27, basic("u", "typo")) + b'{"id":1,"method":"uptime"}')
            assert read_reply(s) == (401, b"")
        waited = time.monotonic() - started
        assert waited < 20 * delay, f"the typo waited {waited:.1f} s behind clients that had gone"
        assert d.debug_log().count("incorrect password attempt") == 501


def test_the_failure_line_forgets_cancelled_waits() -> None:
    """_FailureGate's accounting: waits are served one at a time in arrival order; a wait
    whose connection closed (cancelled), queued or running, leaves the line at once."""
    from quill.rpc.server import _FailureGate

    async def scenario() -> tuple[list[int], int, int, list[str]]:
        gate = _FailureGate(0.02)
        served: list[int] = []

        async def waiter(i: int) -> None:
            await gate.wait()
            served.append(i)

        kept = [asyncio.create_task(waiter(i)) for i in range(3)]
        gone = [asyncio.create_task(waiter(100 + i)) for i in range(200)]
        await asyncio.sleep(0)
        queued = gate.waiting
        for task in gone:
            task.cancel()
        await asyncio.gather(*gone, return_exceptions=True)
        after_cancel = gate.waiting + len(served)   # a kept wait may have ended meanwhile
        await asyncio.gather(*kept)
        # a holder cancelled mid-delay frees the line for the next one
        holder = asyncio.create_task(gate.wait())
        behind = asyncio.create_task(waiter(7))
        while not gate.line.locked():       # the holder is in its delay: cancel it there, with
            await asyncio.sleep(0)          # no real time between (a loaded machine's stall would
        holder.cancel()                     # otherwise let the delay end first)
        order = []
        done, _ = await asyncio.wait({holder, behind}, return_when=asyncio.ALL_COMPLETED)
        order.append("holder cancelled" if holder.cancelled() else "holder served")
        return served, queued, after_cancel, order + [str(gate.waiting)]

    served, queued, after_cancel, tail = asyncio.run(scenario())
    assert queued == 203 and after_cancel == 3
    assert served == [0, 1, 2, 7]
    assert tail == ["holder cancelled", "0"]
