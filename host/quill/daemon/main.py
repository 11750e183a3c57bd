"""quilld: the bridge daemon. Reads options Core style, starts the JSON-RPC
server with Core's authentication, and runs until `stop`, SIGTERM or SIGINT.
"""

import asyncio
import logging
import os
import signal
import sys
import threading
import types
from typing import Any

from quill import __version__, atomic_store, config, postgres
from quill.chain.service import ChainService
from quill.chainparams import CHAINS
from quill.daemon import logging_setup
from quill.daemon.memory import return_large_blocks_to_the_system
from quill.daemon.node import Node
from quill.device.client import SHORT_TIMEOUT
from quill.device.errors import DeviceError, DeviceUnavailable
from quill.device.manager import DeviceManager
from quill.device.pool import DevicePool
from quill.dirlock import try_lock
from quill.emulator.launcher import CRYPTO, DISPLAYS, TARGETS, board_for, confirmation_options
from quill.handlers.lazy import lazy_registry
from quill.rpc import auth
from quill.rpc.jsonrpc import Dispatcher
from quill.rpc.registry import Registry
from quill.rpc.server import RPCServer
from quill.wallet.fallbackfee import FallbackFee
from quill.wallet.manager import WalletManager
from quill.wallet.settings import SettingsError

log = logging.getLogger("quill.init")

# How long a thread waiting for the interpreter lets the running one go on before asking it to
# yield (Python's default: 5 ms). The event loop takes the lock a few times per request, so while
# a large request runs on its lane, each wait would add up to 5 ms to a small client's call.
SWITCH_INTERVAL = 0.001

def build_registry() -> Registry:
    """Every method, each handler module imported at its first call (quill.handlers.lazy)."""
    return lazy_registry()


def usage() -> str:
    lines = [f"Quill daemon version v{__version__}", "", "Usage:  quilld [options]", "", "Options:", ""]
    for opt in config.DAEMON_OPTIONS.values():
        lines.append(f"  -{opt.name}")
        lines.append(f"       {opt.help}")
        lines.append("")
    return "\n".join(lines)


class Daemon:
    """Everything one quilld process owns, set up from its Args."""

    def __init__(self, args: config.Args):
        self.args = args
        self.chain = args.chain
        if args.get_bool("acceptstalefeeestimates", False) and self.chain != "regtest":
            # Core's AppInitParameterInteraction refuses it outside regtest, before any file is touched
            raise config.ConfigError(f"acceptstalefeeestimates is not supported on {self.chain} chain.")
        self.store = args.get("store", "") or "sqlite"
        self.chain_conn = None      # -store=postgresql: the connection holding the chain's lock
        self.replica = False        # -store=postgresql: another quilld leads the chain
        self.notifier: Any = None   # -store=postgresql: quill.daemon.cluster's messages to the others
        self.listener: Any = None
        self.chain_seen = 0         # a replica: the chain's version (quill_versions) its memory holds
        self.leaders: Any = None    # -store=postgresql: quill_leaders, where the leader answers RPC
        self.forward_secret = ""    # -store=postgresql: this run's password for the replicas' calls
        self.rpc_endpoint: tuple[str, int] | None = None   # where this quilld answers RPC, once listening
        self.lease_stop = threading.Event()
        if self.store != "sqlite":
            try:
                postgres.check_url(self.store)
            except postgres.StoreConfigError as e:
                raise config.ConfigError(str(e)) from None
        self.datadir = self._make_datadir()
        self.chain_datadir = config.chain_datadir(self.datadir, self.chain)
        os.makedirs(self.chain_datadir, exist_ok=True)
        # before anything is written there: a second daemon stops here (exit 1), as Core
        self.lock_fd = try_lock(os.path.join(self.chain_datadir, ".lock"))
        if self.lock_fd is None:
            raise OSError(f"Cannot obtain a lock on directory {self.chain_datadir}. Quill is probably already running.")
        self.log_path = self._log_path()
        self._emulator_args()     # the -emu* options checked before anything starts
        self.cookie_path = None
        self.device: DevicePool | None = None
        self.chain_service: Any = None
        self.wallets: Any = None

    def _make_datadir(self) -> str:
        path = config.resolve_datadir(self.args)
        os.makedirs(path, exist_ok=True)
        return path

    def _log_path(self):
        value = self.args.get("debuglogfile", "debug.log")
        if value in ("0", ""):
            return None
        return value if os.path.isabs(value) else os.path.join(self.chain_datadir, value)

    # -- authentication --------------------------------------------------

    def credentials(self):
        creds = []
        user = self.args.get("rpcuser", "")
        password = self.args.get("rpcpassword", "")
        if password:
            creds.append(auth.Credential.from_password(user, password))
        elif self.args.get("rpccookiefile", None) != "0":
            self.cookie_path = self._cookie_path()
            cookie_password = auth.write_cookie(self.cookie_path, self.args.get("rpccookieperms", "owner"))
            creds.append(auth.Credential.from_password(auth.COOKIE_USER, cookie_password))
            log.info("Generated RPC authentication cookie %s", self.cookie_path)
        for value in self.args.get_all("rpcauth"):
            creds.append(auth.Credential.from_rpcauth(value))
        if self.store != "sqlite":      # the replicas' calls passed to this one when it leads
            from quill.daemon.cluster import FORWARD_USER, new_secret
            self.forward_secret = new_secret()
            creds.append(auth.Credential.from_password(FORWARD_USER, self.forward_secret))
        return creds

    def _cookie_path(self) -> str:
        value = self.args.get("rpccookiefile", "")
        if not value:
            return os.path.join(self.chain_datadir, ".cookie")
        return value if os.path.isabs(value) else os.path.join(self.chain_datadir, value)

    # -- listening -------------------------------------------------------

    def binds(self):
        port = self.args.get_int("rpcport", CHAINS[self.chain].rpc_port)
        allowips = self.args.get_all("rpcallowip")
        rpcbinds = self.args.get_all("rpcbind")
        if rpcbinds and not allowips:
            log.warning("WARNING: option -rpcbind was ignored because -rpcallowip was not specified, "
                        "refusing to allow everyone to connect")
        if not (rpcbinds and allowips):
            return [("::1", port), ("127.0.0.1", port)]
        return [split_host_port(b, port) for b in rpcbinds]

    def worker_settings(self) -> dict[str, Any]:
        """What the -rpcworkers processes take of the daemon (RPCServer.start_workers)."""
        return {"chain": self.chain, "deprecated": self.args.get_all("deprecatedrpc"),
                "log_path": self.log_path or "", "debug": self.args.get_all("debug")}

    # -- device ----------------------------------------------------------

    def _emulator_args(self, index: int = 1) -> list:
        """quill-emu's options for the index-th -device=emulator: the board modelled (-emuboard,
        -emuheap, -emucrypto), where it runs, its seed (-emuseed), and the user confirmation (-emuapprove,
        -emuconfirmtimeout). Policy, approval channel and seed in <chain datadir>/emulator (the
        first emulator) or emulator-<index>: each emulated device has its own flash."""
        emulator_args = []
        if self.args.is_set("emuheap"):
            emulator_args = ["--heapsize", self.args.get("emuheap")]
        if self.args.is_set("emucrypto"):
            crypto = self.args.get("emucrypto")
            if crypto not in CRYPTO:
                raise config.ConfigError(f"-emucrypto: unknown value '{crypto}' ({', '.join(CRYPTO)})")
            emulator_args += ["--crypto", crypto]
        target = self.args.get("emutarget", "unix")
        if target not in TARGETS:
            raise config.ConfigError(f"-emutarget: unknown target '{target}' ({', '.join(TARGETS)})")
        emulator_args += ["--target", target]
        if self.args.is_set("emuboard"):
            try:
                emulator_args += ["--board", board_for(target, self.args.get("emuboard"))]
            except ValueError as e:
                raise config.ConfigError(f"-emuboard: {e}") from None
        seed = self.args.get("emuseed", "generate" if target == "unix" else "none")
        if seed not in ("generate", "none"):
            raise config.ConfigError(f"-emuseed: unknown value '{seed}' (generate or none)")
        if seed == "generate":
            if target != "unix":
                raise config.ConfigError("-emuseed=generate needs -emutarget=unix (a qemu board has "
                                         "no filesystem to keep its seed)")
            emulator_args += ["--seed", "generate"]
        approve = self.args.get("emuapprove", "auto")
        timeout = self.args.get_int("emuconfirmtimeout", 0) or None
        try:
            flash = os.path.join(self.chain_datadir, _numbered("emulator", index))
            emulator_args += confirmation_options(approve, flash, timeout)
        except ValueError as e:
            raise config.ConfigError(f"-emuapprove: {e}") from None
        if self.args.is_set("emudisplay"):   # else quill-emu's default (launcher.default_display)
            display = self.args.get("emudisplay")
            if display not in DISPLAYS:
                raise config.ConfigError(f"-emudisplay: unknown panel '{display}' ({', '.join(DISPLAYS)})")
            emulator_args += ["--display", display]
        if self.args.is_set("emuscreen"):
            emulator_args += ["--screen-dir", _numbered(os.path.abspath(self.args.get("emuscreen")), index)]
        return emulator_args

    def open_devices(self, depth: int) -> DevicePool:
        """Every -device, in the order given, as one pool (none given: a pool whose calls fail
        as NO_DEVICE says). The k-th emulator keeps its flash and log apart from the others'."""
        specs = [spec for spec in self.args.get_list("device") if spec]
        timeout = self.args.get_int("devicetimeout", 0)
        managers = []
        emulators = 0
        for spec in specs:
            emulators += spec == "emulator"
            managers.append(DeviceManager(spec, datadir=self.chain_datadir, logger=logging.getLogger("quill.device"),
                                          emulator_args=self._emulator_args(emulators) if spec == "emulator" else (),
                                          short_timeout=float(timeout) if timeout > 0 else SHORT_TIMEOUT,
                                          log_name=_numbered("quill-emu", emulators) + ".log"))
        return DevicePool(managers, depth)

    @staticmethod
    def announce_device(pool: DevicePool) -> None:
        """Open each device once at start-up so the log says what is attached."""
        if not pool.configured:
            log.info("No signing device configured (-device); signing calls will fail until one is given")
            return
        for member in pool.members:
            try:
                info = member.manager.info()
            except (DeviceError, DeviceUnavailable) as e:
                log.warning("Signing device %d not available yet: %s", member.index, e)
                continue
            log.info("Signing device %d: %s, firmware %s, protocol %s", member.index, info.get("board"),
                     info.get("firmware_version"), info.get("protocol_version"))

    # -- chain and wallets -----------------------------------------------

    def open_chain(self):
        """The built-in regtest chain, or a follower of -chainsource; None on other chains without a source."""
        source = self.args.get("chainsource", "") or None
        if source is None and self.chain != "regtest":
            log.info("No chain on %s: the built-in chain is regtest only (use -chainsource)", self.chain)
            return None
        poll_ms = max(10, self.args.get_int("chainpollinterval", 500))
        store_factory = None
        if self.store != "sqlite":
            from quill.chain.pg_store import PgChainStore
            conn, self.chain_conn = self.chain_conn, None
            store_factory = lambda: PgChainStore(self.store, self.chain, conn, replica=self.replica)  # noqa: E731
        return ChainService(self.chain, self.chain_datadir, chainsource=source, store_factory=store_factory,
                            logger=logging.getLogger("quill.chain"), poll_interval=poll_ms / 1000,
                            spender_index=self.args.get_bool("txospenderindex", False),
                            accept_stale_fee_estimates=self.args.get_bool("acceptstalefeeestimates", False),
                            replica=self.replica).start()

    def open_services(self, node):
        """Chain, then the wallets that follow the chain (the devices are opened in run())."""
        node.chain = self.chain_service = self.open_chain()
        if self.chain_service is not None:
            node.wallets = self.wallets = WalletManager(self.chain_service, self.chain, self.chain_datadir,
                                                        catalog=self.wallet_catalog(),
                                                        follows_chain=not self.replica,
                                                        on_loaded=self._announce_loaded)
            self.wallets.load_startup_wallets()
        if self.store != "sqlite" and self.chain_service is not None and not self.replica:
            from quill.chain.pg_store import watch_lease
            from quill.daemon.cluster import ChainEvents
            self.chain_service.subscribe(ChainEvents(self._chain_changed))  # after the wallets: they record first
            threading.Thread(target=watch_lease, args=(self.chain_service.store, atomic_store.abort_node,
                                                       self.lease_stop), daemon=True, name="store-lease").start()
        if self.store != "sqlite" and self.listener is None:
            from quill.daemon.cluster import Listener
            self.listener = Listener(self.store, self.chain, self.on_store_message)
            self.listener.start()

    def take_chain(self) -> None:
        """-store=postgresql: one quilld at a time leads the chain (follows it, mines, takes the
        mempool): the one holding its lock. Another on the same database is a replica: it serves
        every call from the store and takes the lock when the leader stops, dies or loses its
        connection (await_leadership)."""
        if self.store == "sqlite":
            return
        from quill.chain.pg_store import ChainInUse, take_chain
        from quill.daemon.cluster import Leaders, Notifier
        self.notifier = Notifier(self.store, self.chain)
        self.leaders = Leaders(self.store, self.chain)
        try:
            self.chain_conn = take_chain(self.store, self.chain, 0.0)
        except ChainInUse:
            self.replica = True
            log.info("Replica: another quilld leads the %s chain in the store; serving from the store, "
                     "taking over when it stops", self.chain)
            return
        log.info("This quilld leads the %s chain in the store", self.chain)

    def await_leadership(self, node) -> None:
        """A replica's thread: waits for the chain's lock, then leads (promote)."""
        from quill.chain.pg_store import ChainInUse, take_chain
        while not self.lease_stop.is_set():
            try:
                conn = take_chain(self.store, self.chain, 1.0)
            except ChainInUse:
                continue
            except postgres.StoreConfigError as e:
                log.warning("Replica: %s", e)
                self.lease_stop.wait(1.0)
                continue
            if self.lease_stop.is_set():
                conn.close()
                return
            try:
                self.promote(node, conn)
            except Exception as e:
                atomic_store.abort_node(f"Could not take over the {self.chain} chain in the store: {e}")
            return

    def promote(self, node, conn) -> None:
        """The replica becomes the leader: its chain and wallets are opened again as the leader's
        (the chain resumed as at a restart), with the wallets it had loaded, and answer the calls
        from then on; the other replicas announce theirs again, which this one loads too."""
        old = (self.wallets, self.chain_service)
        names: list[str] = list(self.wallets.wallets) if self.wallets is not None else []
        self.replica = False
        self.chain_conn = conn
        opened = types.SimpleNamespace(chain=None, wallets=None)
        self.open_services(opened)
        for name in names:
            self.wallets.follow(name)
        node.wallets, node.chain = opened.wallets, opened.chain
        for service in old:
            if service is not None:
                service.close()
        self.publish_endpoint()
        self.notifier.send("leader")
        log.info("This quilld now leads the %s chain in the store", self.chain)

    def publish_endpoint(self) -> None:
        """The leader's RPC address and forwarding secret in quill_leaders, for the replicas."""
        if self.leaders is not None and self.rpc_endpoint is not None and not self.replica:
            self.leaders.publish(*self.rpc_endpoint, self.forward_secret)

    def withdraw_endpoint(self) -> None:
        """A leader stopping cleanly takes its row out of quill_leaders (a killed one leaves it:
        a replica then finds the port closed, and the next leader overwrites it)."""
        if self.leaders is None or self.replica:
            return
        try:
            self.leaders.withdraw(self.forward_secret)
        except Exception as e:      # the store is gone: nothing to clean, the row names a dead port
            log.warning("Could not remove this quilld from quill_leaders (%s)", type(e).__name__)

    def forward_call(self, req: Any) -> tuple[bool, Any]:
        """A replica passes the leader's calls to it (quill.daemon.cluster.forward)."""
        from quill.daemon.cluster import LEADER_CALLS, forward
        if not self.replica or req.method not in LEADER_CALLS:
            return False, None
        request = {"method": req.method, "params": req.params, "id": req.json_id}
        return True, forward(self.leaders, request)

    def on_store_message(self, kind: str, argument: str) -> None:
        """What another quilld on the store announced (quill.daemon.cluster)."""
        wallets = self.wallets
        if kind == "chain" and self.replica:
            self.sync_with_store(None)
        elif kind == "wallet" and wallets is not None:
            self.sync_with_store(argument)
        elif kind == "loaded" and not self.replica and wallets is not None:
            wallets.follow(argument)
        elif kind == "leader" and self.replica and wallets is not None:
            for name in list(wallets.wallets):
                self.notifier.send("loaded", name)

    def _chain_changed(self) -> None:
        from quill.daemon.cluster import chain_key
        self.wallets.catalog.bump(chain_key(self.chain))
        self.notifier.send("chain")

    def sync_with_store(self, wallet_name: str | None) -> None:
        """Memory made current with the store before a call (quill.daemon.cluster): a replica's
        chain, and the wallet `wallet_name` names (the only one loaded when None), each read again
        when its version in the store is newer than what this process holds."""
        from quill.daemon.cluster import chain_key
        from quill.wallet.pg_store import version_key
        wallets, service = self.wallets, self.chain_service
        if wallets is None or service is None:
            return
        keys = []
        if self.replica:
            keys.append(chain_key(self.chain))
        loaded = wallets.wallets
        name = wallet_name if wallet_name is not None else (next(iter(loaded)) if len(loaded) == 1 else None)
        wallet = loaded.get(name) if name is not None else None
        wallet_key = version_key(self.chain, str(name))
        if wallet is not None:
            keys.append(wallet_key)
        if not keys:
            return
        found = wallets.catalog.versions(keys)
        newest = found.get(chain_key(self.chain), 0)
        if self.replica and newest > self.chain_seen:
            service.reload()
            self.chain_seen = max(self.chain_seen, newest)
        if wallet is not None:
            newest = found.get(wallet_key, 0)
            conn = wallet.store.db
            if newest > conn.known_version:
                wallets.refresh(name, newest)

    def _announce_loaded(self, name: str) -> None:
        if self.notifier is not None:
            self.notifier.send("loaded", name)

    def wallet_catalog(self):
        """The -store's catalog of wallets; None: the SQLite files (the default)."""
        if self.store == "sqlite":
            return None
        from quill.wallet.pg_store import PgCatalog
        log.info("Wallets in the PostgreSQL store %s", postgres.redact(self.store))
        return PgCatalog(self.store, self.chain, on_change=lambda name: self.notifier.send("wallet", name))

    def close_services(self):
        """In the reverse order of opening; each one only if it was opened."""
        self.lease_stop.set()
        self.withdraw_endpoint()
        if self.listener is not None:
            self.listener.stop()
        for service in (self.wallets, self.chain_service, self.device):
            if service is not None:
                service.close()
        if self.notifier is not None:
            self.notifier.close()
        if self.leaders is not None:
            self.leaders.close()

    # -- run -------------------------------------------------------------

    async def run(self) -> int:
        registry = build_registry()
        dispatcher = Dispatcher(registry)
        if self.store != "sqlite":
            dispatcher.before_call = lambda ctx: self.sync_with_store(ctx.wallet_name)
            dispatcher.forward = self.forward_call
        work_queue = max(1, self.args.get_int("rpcworkqueue", 64))
        self.device = self.open_devices(work_queue)
        device_queue = self.device.queue
        node = Node(device=self.device, chain_name=self.chain, datadir=self.datadir, chain_datadir=self.chain_datadir,
                    log_path=self.log_path or "", deprecated_rpc=self.args.get_all("deprecatedrpc"),
                    registry=registry, active_commands=dispatcher.active, device_queue=device_queue,
                    signer=self.args.get("signer", ""), fallback_fee=FallbackFee(self.args.get("fallbackfee")))
        allowlist = auth.AllowList(self.args.get_all("rpcallowip"))
        authenticator = auth.Authenticator(self.credentials())
        server = RPCServer(dispatcher=dispatcher, authenticator=authenticator, allowlist=allowlist,
                           node=node, binds=self.binds(), work_queue=work_queue, device_queue=device_queue,
                           threads=max(1, self.args.get_int("rpcthreads", 16)),
                           timeout=max(1, self.args.get_int("rpcservertimeout", 30)),
                           auth_failure_delay=max(0, self.args.get_int("rpcauthfailuredelay", 250)) / 1000)
        try:
            self.take_chain()
        except postgres.StoreConfigError as e:
            log.error("Error: %s", e)
            print(f"Error: {e}", file=sys.stderr)
            return 1
        loop = asyncio.get_running_loop()
        stop_event = asyncio.Event()
        node.on_shutdown(lambda: loop.call_soon_threadsafe(stop_event.set))
        aborted: list[str] = []     # Core's AbortNode: shut down cleanly, exit with failure

        def abort(message: str) -> None:
            aborted.append(message)
            node.request_shutdown()
        atomic_store.on_abort(abort)
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, node.request_shutdown)
        if not atomic_store.check_disk_space(self.chain_datadir):
            # Core's AppInitMain: a data directory with less than 50 MiB free is refused at start
            message = f'Error: Disk space is low for "{self.chain_datadir}"'
            log.error("%s", message)
            print(message, file=sys.stderr)
            return 1
        try:
            try:
                self.open_services(node)
            except SettingsError as e:  # Core's start-up refusal for settings.json, in its words
                log.error("Error: %s", e.message)
                print(f"Error: {e.message}", file=sys.stderr)
                return 1
            except postgres.StoreConfigError as e:  # -store unreachable or refusing: its reason, no password
                log.error("Error: %s", e)
                print(f"Error: {e}", file=sys.stderr)
                return 1
            except Exception as e:  # a damaged or locked store: one clear init error, no traceback
                log.error("Error: cannot open the chain: %s", e)
                print(f"Error: cannot open the chain: {e}", file=sys.stderr)
                return 1
            await server.start()
            workers = self.args.get_int("rpcworkers", 0)
            if workers > 0:  # beside this process, on its sockets (rpc/stateless)
                await server.start_workers(workers, self.worker_settings())
            if self.store != "sqlite" and server.ports:
                from quill.daemon.cluster import reachable_host
                self.rpc_endpoint = (reachable_host(server.binds), server.ports[0])
                self.publish_endpoint()
            if self.replica:
                threading.Thread(target=self.await_leadership, args=(node,), daemon=True,
                                 name="store-leadership").start()
            if self.device is not None:
                loop.run_in_executor(None, self.announce_device, self.device)
            log.info("quilld started on %s, RPC port %s", self.chain, ",".join(map(str, sorted(set(server.ports)))))
            await stop_event.wait()
            log.info("Shutdown: in progress...")
            await server.stop()
        finally:
            self.close_services()
            if self.cookie_path:
                auth.remove_cookie(self.cookie_path)
            log.info("Shutdown: done")
        return 1 if aborted else 0


def _numbered(name: str, index: int) -> str:
    """name for the first device, name-<index> for the others."""
    return name if index <= 1 else f"{name}-{index}"


def restrict_new_files(args: config.Args) -> None:
    """Core's umask 077 (init.cpp), set before anything is created: new files are 0600 and new
    directories 0700, since wallets hold xpubs and the whole history. -sysperms keeps the
    system's umask. Files already there keep their mode."""
    if not args.get_bool("sysperms", False):
        os.umask(0o077)


def split_host_port(value: str, default_port: int):
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else default_port
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, int(port)
    return value, default_port


def run_loop(main_coroutine):
    """uvloop's event loop when it is installed (it roughly halves the RPC server's
    per-request cost), asyncio's otherwise."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main_coroutine)
    return uvloop.run(main_coroutine)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = config.load(argv, config.DAEMON_OPTIONS)
        if any(args.is_set(h) for h in ("help", "h", "?")):
            print(usage())
            return 0
        if args.is_set("version"):
            print(f"Quill daemon version v{__version__}")
            return 0
        restrict_new_files(args)
        daemon = Daemon(args)
        logging_setup.setup(daemon.log_path, args.get_bool("printtoconsole", False),
                            args.get_all("debug"))
        for warning in args.warnings:
            log.warning("Warning: %s", warning)
        log.info("Quill version v%s, chain=%s, datadir=%s", __version__, daemon.chain, daemon.datadir)
        tune_process()
        return run_loop(daemon.run())
    except (config.ConfigError, auth.AuthConfigError) as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1


def tune_process() -> None:
    """What every process that serves RPC sets at start, the daemon and its -rpcworkers alike: glibc's
    fixed malloc thresholds (daemon/memory: without them, each large request grows the heap and
    each end trims it, ~130 page faults and ~0.25 ms of system time per 500-input decode) and
    SWITCH_INTERVAL (a large body runs on a thread of the process's own lanes)."""
    return_large_blocks_to_the_system()
    sys.setswitchinterval(SWITCH_INTERVAL)


if __name__ == "__main__":
    sys.exit(main())
