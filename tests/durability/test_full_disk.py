"""The full disk, for real: quilld's data directory on a small tmpfs, filled while it runs.

The reproduction of the outsider's run: `generatetoaddress` on a full disk must not move the
tip, `createwallet` must leave nothing behind, every other write either lands whole or answers
Core's RPC_DATABASE_ERROR naming the disk, and after space is freed and quilld restarted, every
acknowledged block, transaction and label is there and the wallet equals a fresh rescan.
Mounting a tmpfs needs root, as CI runs; elsewhere the test skips with that reason.
"""
import contextlib
import os
import subprocess
from decimal import Decimal

import pytest

from quill.atomic_store import DISK_SPACE_TOO_LOW, MIN_DISK_SPACE
from quill.tx.descriptor import add_checksum
from quill.tx.hashes import sha256
from tests.kit.rpc_daemon import QuillDaemon, RPCFailure
from tests.kit.toolchains import unavailable
from tests.wallet_e2e.e2ekit import COIN, FEE, FOREIGN_ADDRESS, Coin, Keys, build_tx, multiset

pytestmark = pytest.mark.sqlite_store(
    "the data directory's own disk filled; with -store=postgresql the stores are on the server's disk "
    "(its refusal, SQLSTATE 53100, is mapped in quill.atomic_store.write_failure_cause)")

AUTH = ("-rpcuser=disk", "-rpcpassword=full")
RPC_DATABASE_ERROR = -20
DISK_MB = 80


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        unavailable("a full disk needs a tmpfs, and mounting one needs root (CI runs as root)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        unavailable(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(disk, leave: int) -> None:
    """Write a filler file until `leave` bytes are free (0: until the disk refuses)."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    chunk = b"\0" * (1 << 20)
    with open(disk / "filler", "ab") as f:
        with contextlib.suppress(OSError):
            while free > leave:
                f.write(chunk[:max(4096, min(len(chunk), free - leave))])
                f.flush()
                free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize


def unlabelled(entries):
    """A fresh rescan knows no label set by hand."""
    return [{k: v for k, v in e.items() if k != "label"} for e in entries]


def refused(error: RPCFailure) -> bool:
    return error.code == RPC_DATABASE_ERROR and error.message.startswith(DISK_SPACE_TOO_LOW)


class Node:
    def __init__(self, datadir):
        self.datadir = datadir
        self.d = QuillDaemon(datadir, *AUTH).start()

    def wrpc(self, method, *params, wallet="w"):
        return self.d.rpc(method, *params, path=f"/wallet/{wallet}")

    def restart(self):
        self.d.stop()
        self.d = QuillDaemon(self.datadir, *AUTH).start()


def test_a_full_disk_loses_nothing_acknowledged(small_disk):
    node = Node(small_disk / "quill")
    keys = Keys(sha256(b"full disk"))
    try:
        d = node.d
        d.rpc("createwallet", "w", True, True, None, None, None, True)
        assert all(r["success"] for r in node.wrpc("importdescriptors", keys.import_requests()))
        address = node.wrpc("getnewaddress")
        mined = d.rpc("generatetoaddress", 101, address)
        acknowledged_blocks = list(mined)

        # 1. Below Core's 50 MiB: a block is refused whole, the tip does not move
        fill(small_disk, MIN_DISK_SPACE // 5)
        with pytest.raises(RPCFailure) as no_block:
            d.rpc("generatetoaddress", 10, FOREIGN_ADDRESS)
        assert refused(no_block.value), no_block.value.error
        assert d.rpc("getblockcount") == 101
        assert d.rpc("getbestblockhash") == mined[-1]

        # 2. Nothing free at all: each write lands whole or is refused naming the disk
        fill(small_disk, 0)
        with pytest.raises(RPCFailure) as no_wallet:
            d.rpc("createwallet", "w2", True, True)
        assert refused(no_wallet.value), no_wallet.value.error
        assert "w2" not in d.rpc("listwallets")
        assert not (node.d.chain_dir / "wallets" / "w2").exists()

        coinbase = d.rpc("getblock", mined[0])["tx"][0]
        script = bytes.fromhex(node.wrpc("getaddressinfo", address)["scriptPubKey"])
        spend = build_tx([Coin(bytes.fromhex(coinbase)[::-1], 0, 50 * COIN, script)],
                         [(script, 20 * COIN), (bytes.fromhex(node.wrpc("getaddressinfo", FOREIGN_ADDRESS)
                                                              ["scriptPubKey"]), 30 * COIN - FEE)], keys)
        acknowledged_txs = []
        try:
            acknowledged_txs.append(d.rpc("sendrawtransaction", spend.hex()))
        except RPCFailure as e:
            assert refused(e), e.error
            assert spend.txid_hex() not in d.rpc("getrawmempool")
        labels = {}
        try:
            node.wrpc("setlabel", address, "kept")
            labels[address] = "kept"
        except RPCFailure as e:
            assert refused(e), e.error
        wide = [{"desc": add_checksum(keys.receive.split("#")[0].replace("/0/*", "/7/*")), "timestamp": "now",
                 "range": [0, 3000]}]
        before = node.wrpc("listdescriptors")
        result = node.wrpc("importdescriptors", wide)[0]
        if result["success"]:
            imported = True
        else:
            assert result["error"]["code"] == RPC_DATABASE_ERROR, result
            assert result["error"]["message"].startswith(DISK_SPACE_TOO_LOW), result
            assert node.wrpc("listdescriptors") == before
            imported = False
        assert d.rpc("getblockcount") == 101

        # 3. Space again: the node goes on from where the disk is
        os.remove(small_disk / "filler")
        acknowledged_blocks += d.rpc("generatetoaddress", 5, FOREIGN_ADDRESS)
        assert d.rpc("getblockcount") == 106

        # 4. The next start opens with everything acknowledged
        node.restart()
        d = node.d
        assert d.rpc("getblockcount") == 106
        for block in acknowledged_blocks:
            assert d.rpc("getblockheader", block)["confirmations"] > 0
        for txid in acknowledged_txs:
            assert d.rpc("getrawtransaction", txid, True)["confirmations"] > 0
        for labelled, label in labels.items():
            assert node.wrpc("getaddressinfo", labelled)["labels"] == [label]
        descs = [x["desc"] for x in node.wrpc("listdescriptors")["descriptors"]]
        assert (wide[0]["desc"] in descs) == imported
        assert "w2" not in [w["name"] for w in d.rpc("listwalletdir")["wallets"]]
        d.rpc("createwallet", "w2", True, True)           # the name is free: nothing was left behind

        # ... and the wallet equals a fresh rescan of its descriptors
        d.rpc("createwallet", "fresh", True, True)
        requests = [{k: v for k, v in x.items() if k in ("desc", "timestamp", "active", "internal", "range")}
                    for x in node.wrpc("listdescriptors")["descriptors"]]
        assert all(r["success"] for r in node.wrpc("importdescriptors", requests, wallet="fresh"))
        mine, fresh = node.wrpc("listsinceblock", ""), node.wrpc("listsinceblock", "", wallet="fresh")
        assert multiset(unlabelled(mine["transactions"])) == multiset(unlabelled(fresh["transactions"])), (
            mine["transactions"][:2], fresh["transactions"][:2])
        assert node.wrpc("getbalances") == node.wrpc("getbalances", wallet="fresh")
        assert node.wrpc("getbalances")["mine"]["trusted"] > Decimal(0)
        # the log says what happened, and no traceback
        assert "Traceback" not in d.debug_log()
    finally:
        node.d.stop()


def test_start_refused_below_cores_free_space(small_disk):
    fill(small_disk, MIN_DISK_SPACE // 2)
    datadir = small_disk / "quill"
    d = QuillDaemon(datadir, *AUTH, wait=False).start()
    assert d.proc.wait(30) == 1
    message = f'Error: Disk space is low for "{datadir / "regtest"}"'
    assert message in d.proc.stderr.read().decode()
    assert message in d.debug_log()
