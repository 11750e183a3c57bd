"""A throwaway PostgreSQL cluster for the tests: Debian's initdb and pg_ctl in a temporary
directory, on a free port, listening on 127.0.0.1 only (no Unix socket), fsync off.

initdb refuses to run as root, so as root (CI) the cluster runs as the `postgres` system user
(runuser), its directory chowned to it; otherwise as the current user. One cluster per process:
every pytest-xdist worker starts its own on its own port, on first use, and stops it at exit.

Without PostgreSQL's binaries the tests that need it skip with the reason (tests.kit.toolchains:
with QUILL_REQUIRE_TOOLCHAINS=1 they fail). `make system-deps` installs Debian's `postgresql`.

QUILL_TEST_STORE=postgresql makes tests.kit.rpc_daemon.QuillDaemon (and the in-process wallet
kits) run their wallets on such a cluster: one database per data directory, so a daemon restarted
on the same data directory finds its wallets again.
"""
from __future__ import annotations

import atexit
import glob
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from quill.wallet.catalog import Catalog
from tests.kit.rpc_daemon import free_port
from tests.kit.toolchains import unavailable

STORE_ENV = "QUILL_TEST_STORE"
SUPERUSER = "quill"
# A role that must give its password (scram-sha-256): the tests of a password in -store's URL.
PASSWORD_ROLE = "quill_pw"


def wanted() -> bool:
    """True when QUILL_TEST_STORE asks the wallet tests to run on PostgreSQL."""
    return os.environ.get(STORE_ENV, "sqlite") == "postgresql"


def bindir() -> Path | None:
    """The folder of initdb and pg_ctl: $PG_BINDIR, initdb on PATH, then Debian's newest."""
    env = os.environ.get("PG_BINDIR")
    if env:
        return Path(env)
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


class Cluster:
    """One running PostgreSQL server; `url(db)` names a database on it as quilld's -store takes it."""

    def __init__(self) -> None:
        bin_dir = bindir()
        if bin_dir is None or not (bin_dir / "pg_ctl").is_file():
            unavailable("PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql, or set PG_BINDIR)")
        self.bin = bin_dir
        self.as_root = os.geteuid() == 0
        self.dir = Path(tempfile.mkdtemp(prefix="quill-pg-"))
        self.data = self.dir / "data"
        self.port = 0
        self.log = self.dir / "server.log"
        if self.as_root:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.dir, ignore_errors=True)
                unavailable("running as root and there is no `postgres` user to run initdb as")
            os.chown(self.dir, owner.pw_uid, owner.pw_gid)
        self._initdb()
        self._start()

    def _run(self, *cmd: str) -> subprocess.CompletedProcess:
        argv = [str(self.bin / cmd[0]), *cmd[1:]]
        if self.as_root:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120)

    def _initdb(self) -> None:
        done = self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                         "--no-instructions")
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr}")
        hba = (f"host all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n"
               "host all all 127.0.0.1/32 trust\n")
        self._write(self.data / "pg_hba.conf", hba)

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text)
        if self.as_root:
            owner = pwd.getpwnam("postgres")
            os.chown(path, owner.pw_uid, owner.pw_gid)

    def _start(self) -> None:
        for _ in range(5):      # a free port may be taken between the probe and the bind
            self.port = free_port()
            options = (f"-p {self.port} -h 127.0.0.1 -k '' -c fsync=off -c synchronous_commit=off "
                       "-c full_page_writes=off -c max_connections=300 -c shared_buffers=16MB")
            done = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                             "-o", options, "start")
            if done.returncode == 0:
                self.sql(f"CREATE ROLE {PASSWORD_ROLE} LOGIN CREATEDB PASSWORD 'pw-not-in-logs'")
                return
        raise RuntimeError(f"pg_ctl start failed: {done.stderr} {self.log.read_text() if self.log.exists() else ''}")

    def url(self, db: str = "postgres", user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{db}"

    def sql(self, statement: str, db: str = "postgres") -> list:
        import psycopg
        with psycopg.connect(self.url(db), autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []

    def create_database(self, name: str) -> str:
        """A database named `name` (made when absent); its -store URL."""
        if not self.sql("SELECT 1 FROM pg_database WHERE datname = %s" % quote_literal(name)):
            self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_cluster: Cluster | None = None


def shared_cluster() -> Cluster:
    """This process's cluster, started on first use and stopped at exit."""
    global _cluster
    if _cluster is None:
        _cluster = Cluster()
        atexit.register(stop_shared)
    return _cluster


def stop_shared() -> None:
    global _cluster
    if _cluster is not None:
        _cluster.stop()
        _cluster = None


def database_name(datadir: Path) -> str:
    """The name of `datadir`'s own database (from its path)."""
    return "q_" + hashlib.sha1(str(Path(datadir).resolve()).encode()).hexdigest()[:20]


def store_url_for(datadir: Path) -> str:
    """The -store URL of `datadir`'s own database on this process's cluster (one per data
    directory, named from its path)."""
    return shared_cluster().create_database(database_name(datadir))


def copy_database(source: Path, datadir: Path) -> str:
    """`datadir`'s own database made a copy of `source`'s (CREATE DATABASE ... TEMPLATE: no one
    may be connected to it); its -store URL."""
    cluster = shared_cluster()
    cluster.sql(f'CREATE DATABASE "{database_name(datadir)}" TEMPLATE "{database_name(source)}"')
    return cluster.url(database_name(datadir))



def wallet_catalog(datadir: Path, chain: str) -> Catalog | None:
    """The wallet catalog an in-process WalletManager on `datadir` uses: None (the SQLite
    files) by default, the data directory's database under QUILL_TEST_STORE=postgresql."""
    if not wanted():
        return None
    from quill.wallet.pg_store import PgCatalog
    return PgCatalog(store_url_for(datadir), chain)
