"""Options and configuration files, Core style (Core's ArgsManager).

Shared by quilld and quill-cli. The rules followed:
* `-name=value` or `--name=value`; a bare `-name` means "" (true for booleans);
  `-noname` negates (false); the last value wins, list options keep all.
* The conf file (default `quill.conf` in the datadir, same syntax as
  bitcoin.conf): `name=value`, `#` comments, `[main]`/`[test]`/`[testnet4]`/
  `[signet]`/`[regtest]` sections and `chain.name=value` prefixes.
* Precedence: command line, then the chain's section, then the top of the
  file. Network-only options (ports, binds, wallets) at the top of the file
  apply only to mainnet, as in Core.
* Unknown command-line options are an error; unknown conf keys are ignored
  with a warning.
"""

import os
from dataclasses import dataclass

from quill.chainparams import CHAIN_FLAGS, CHAINS


class ConfigError(Exception):
    """A configuration problem reported to the user as `Error: <message>`."""


@dataclass(frozen=True)
class Option:
    name: str
    help: str
    network_only: bool = False
    sensitive: bool = False  # never logged or echoed


def _opts(*options):
    return {o.name: o for o in options}


COMMON_OPTIONS = _opts(
    Option("conf", "Specify path to read-only configuration file. Relative paths are prefixed by datadir location (default: quill.conf)"),
    Option("datadir", "Specify data directory (default: ~/.quill)"),
    Option("chain", "Use the chain <chain> (default: main). Allowed values: main, test, testnet4, signet, regtest"),
    Option("regtest", "Use the regression test chain; equivalent to -chain=regtest"),
    Option("testnet", "Use the testnet3 chain; equivalent to -chain=test"),
    Option("testnet4", "Use the testnet4 chain; equivalent to -chain=testnet4"),
    Option("signet", "Use the signet chain; equivalent to -chain=signet"),
    Option("rpcport", "Listen for JSON-RPC connections on <port> (default: 8332, testnet3: 18332, testnet4: 48332, signet: 38332, regtest: 18443)", network_only=True),
    Option("rpcuser", "Username for JSON-RPC connections"),
    Option("rpcpassword", "Password for JSON-RPC connections", sensitive=True),
    Option("rpccookiefile", "Location of the auth cookie. Relative paths will be prefixed by a net-specific datadir location. (default: data dir)"),
    Option("help", "Print this help message and exit"),
    Option("h", "Print this help message and exit"),
    Option("?", "Print this help message and exit"),
    Option("version", "Print version and exit"),
)

DAEMON_OPTIONS = {**COMMON_OPTIONS, **_opts(
    Option("rpcbind", "Bind to given address to listen for JSON-RPC connections. Do not expose the RPC server to untrusted networks such as the public internet! This option is ignored unless -rpcallowip is also passed.", network_only=True),
    Option("rpcallowip", "Allow JSON-RPC connections from specified source. Valid values for <ip> are a single IP (e.g. 1.2.3.4), a network/netmask (e.g. 1.2.3.4/255.255.255.0), a network/CIDR (e.g. 1.2.3.4/24)."),
    Option("rpcauth", "Username and HMAC-SHA-256 hashed password for JSON-RPC connections. The field <userpw> comes in the format: <USERNAME>:<SALT>$<HASH>.", sensitive=True),
    Option("rpccookieperms", "Set permissions on the RPC auth cookie file so that it is readable by [owner|group|all] (default: owner)"),
    Option("rpcworkqueue", "Set the maximum depth of the work queue to service RPC calls (default: 64)"),
    Option("rpcthreads", "Set the number of threads to service RPC calls (default: 16)"),
    Option("rpcworkers", "Worker processes that serve the RPC connections, answer stateless calls (decoderawtransaction, decodepsbt, ...) themselves and pass the others to the main process (default: 0, none)"),
    Option("rpcservertimeout", "Timeout during HTTP requests (default: 30)"),
    Option("rpcauthfailuredelay", "(test only) How long a wrong password is answered after, in milliseconds; failures are answered one at a time (default: 250)"),
    Option("deprecatedrpc", "Allows deprecated RPC method(s) to be used"),
    # Core's text until it dropped the option (it then always used umask 077); kept here as the issue asks
    Option("sysperms", "Create new files with system default permissions, instead of umask 077"),
    Option("printtoconsole", "Send trace/debug info to console (default: 1 when no -daemon. To disable logging to file, set -nodebuglogfile)"),
    Option("debuglogfile", "Specify location of debug log file (default: debug.log). Relative paths will be prefixed by a net-specific datadir location."),
    Option("debug", "Output debug and trace logging (default: -nodebug, supplying <category> is optional). If <category> is not supplied or if <category> is 1 or \"all\", output all debug logging. <category> can be: rpc, http, device, chain, wallet."),
    Option("device", "Signing device: emulator (start quill-emu), auto (find a board by USB VID/PID), a serial port path or a pyserial URL (default: none). May be given several times: a pool of devices (the -emu* options apply to every emulator)"),
    Option("emuboard", "The board the emulated device models: its heap, firmware loading and crypto module, a board of boards/ (rpi_pico, esp32_s3, pyboard, ...) (default: rpi_pico; on a qemu target the board it stands for)"),
    Option("emuheap", "Experiment: heap size of the emulated device, as MicroPython's -X heapsize (default: its board's)"),
    Option("emucrypto", "Experiment: the emulated device's signing arithmetic: auto (its board's: the native module where the board deploys one), native or python (default: auto)"),
    Option("emuseed", "The emulated device's seed: generate (made on the device at its first start, kept in <datadir>/<chain>/emulator/seed.bin) or none (default: generate; none on a qemu target)"),
    Option("emutarget", "Where the emulated device's firmware runs: unix (MicroPython's unix port), qemu-m0plus (a Cortex-M0+, the RP2040's core, under QEMU) or qemu-m4 (a Cortex-M4, the pyboard's) (default: unix)"),
    Option("emuapprove", "How the emulated device's user confirms signing: auto (approve at once), ask (y/n on quill-emu's terminal), channel (test-only: answer \"approve\" or \"refuse\" in <datadir>/<chain>/emulator/confirm-answer) (default: auto)"),
    Option("emudisplay", "The emulated device's panel: st7789-240x240, st7789-240x135, ssd1306-128x64 or none (default: the modelled board's own, the Pico's st7789-240x240; none on a qemu target)"),
    Option("emuscreen", "Write every screen the emulated device draws to this directory, as <sequence>-<screen>.png and .txt"),
    Option("emuconfirmtimeout", "How long the emulated device waits for a confirmation, in milliseconds (default: 120000)"),
    Option("fallbackfee", "A fee rate (in BTC/kvB) that will be used when fee estimation has insufficient data. 0 to entirely disable the fallbackfee feature. (default: 0.00)"),
    Option("signer", "External signing tool, see doc/external-signer.md"),
    Option("devicetimeout", "How long to wait for the device's immediate answers (ping, get_info, each step of a signing session), in seconds (default: 5; 30 on a qemu target)"),
    Option("chainsource", "Follow a Bitcoin Core-compatible node through its RPC, http://user:pass@host:port (default: the built-in regtest chain)", sensitive=True),
    Option("store", "Where the wallets are kept: sqlite (one file per wallet under <datadir>/<chain>/wallets) or postgresql://user@host:port/dbname, every wallet in one PostgreSQL database; the password from ~/.pgpass or the URL (default: sqlite)", sensitive=True),
    Option("chainpollinterval", "How often a follower asks its -chainsource node for news, in milliseconds (default: 500)"),
    Option("txospenderindex", "Maintain a transaction output spender index, used by the gettxspendingprevout rpc call (default: 0)"),
    Option("acceptstalefeeestimates", "Read fee estimates even if they are stale (regtest only; default: 0) fee estimates are considered stale if they are 60 hours old"),
)}

CLI_OPTIONS = {**COMMON_OPTIONS, **_opts(
    Option("named", "Pass named instead of positional arguments (default: false)"),
    Option("stdin", "Read extra arguments from standard input, one per line until EOF/Ctrl-D (recommended for sensitive information such as passphrases). When combined with -stdinrpcpass, the first line from standard input is used for the RPC password."),
    Option("stdinrpcpass", "Read RPC password from standard input as a single line. When combined with -stdin, the first line from standard input is used for the RPC password."),
    Option("rpcwait", "Wait for RPC server to start"),
    Option("rpcwaittimeout", "Timeout in seconds to wait for the RPC server to start, or 0 for no timeout. (default: 0)"),
    Option("rpcconnect", "Send commands to node running on <ip> (default: 127.0.0.1)"),
    Option("rpcclienttimeout", "Timeout in seconds during HTTP requests, or 0 for no timeout. (default: 900)"),
    Option("rpcwallet", "Send RPC for non-default wallet on RPC server (needs to be the exact name of the wallet)"),
)}


def default_datadir() -> str:
    return os.path.join(os.path.expanduser("~"), ".quill")


class Args:
    """Parsed options with Core's precedence rules."""

    def __init__(self, options: dict):
        self.options = options
        self.cmdline: dict[str, list] = {}
        self.conf: dict[str, dict[str, list]] = {}   # section ("" = top) -> name -> values
        self.warnings: list[str] = []
        self.positional: list[str] = []
        self.chain = "main"

    # -- reading ---------------------------------------------------------

    def parse_command_line(self, argv, allow_positional=False):
        """Options first; with allow_positional the first non-option ends them (bitcoin-cli)."""
        for i, arg in enumerate(argv):
            if not arg.startswith("-") or arg == "-":
                if allow_positional:
                    self.positional = list(argv[i:])
                    return
                raise ConfigError(f"Command line contains unexpected token '{arg}', see quilld -h for a list of options.")
            key = arg[2:] if arg.startswith("--") else arg[1:]
            name, sep, value = key.partition("=")
            name, value = self._interpret(name, value if sep else "")
            if name is None:
                raise ConfigError(f"Error parsing command line arguments: Invalid parameter {arg}")
            self.cmdline.setdefault(name, []).append(value)

    def _interpret(self, name, value):
        """Map `noX`/`X` to (option, value); (None, None) if unknown."""
        if name.startswith("no") and name[2:] in self.options:
            return name[2:], "0" if value in ("", "1") else "1"
        if name in self.options:
            return name, value
        return None, None

    def read_config_file(self, path, required):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            if required:
                raise ConfigError('Error reading configuration file: '
                                  f'specified config file "{path}" could not be opened.') from None
            return
        except OSError as e:
            raise ConfigError(f'Error reading configuration file: specified config file "{path}" could not be opened.') from e
        self.read_config_text(text)

    def read_config_text(self, text):
        section = ""
        for lineno, raw in enumerate(text.splitlines(), 1):
            line, hashed, _ = raw.partition("#")
            line = line.strip()
            if not line:
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                continue
            if line.startswith("-"):
                raise ConfigError(f"Error reading configuration file: parse error on line {lineno}, options in configuration file must be specified without leading -")
            if "=" not in line:
                raise ConfigError(f"Error reading configuration file: parse error on line {lineno}: {line}, if you intended to specify a negated option, use -no{line}=1 instead")
            name, value = (s.strip() for s in line.split("=", 1))
            if hashed and "rpcpassword" in name:
                raise ConfigError(f"Error reading configuration file: parse error on line {lineno}, using # in rpcpassword can be ambiguous and should be avoided")
            target = section
            if "." in name:
                target, name = name.split(".", 1)
            option, value = self._interpret(name, value)
            if option is None:
                self.warnings.append(f"Ignoring unknown configuration value {name}")
                continue
            self.conf.setdefault(target, {}).setdefault(option, []).append(value)

    # -- chain -----------------------------------------------------------

    def select_chain(self) -> str:
        chosen = []
        for flag, chain in CHAIN_FLAGS.items():
            if self.get_bool(flag, False, use_chain=False):
                chosen.append(chain)
        explicit = self.get("chain", None, use_chain=False)
        if explicit is not None:
            if explicit not in CHAINS:
                raise ConfigError(f"Invalid chain type: {explicit}")
            chosen.append(explicit)
        if len(chosen) > 1:
            raise ConfigError("Invalid combination of -regtest, -signet, -testnet, -testnet4 and -chain. Can use at most one.")
        self.chain = chosen[0] if chosen else "main"
        self._warn_ignored_network_options()
        return self.chain

    def _warn_ignored_network_options(self):
        if self.chain == "main":
            return
        for name in self.conf.get("", {}):
            if self.options[name].network_only and name not in self.conf.get(self.chain, {}):
                self.warnings.append(
                    f"Config setting for -{name} only applied on {self.chain} network when in [{self.chain}] section.")

    # -- lookups ---------------------------------------------------------

    def _layers(self, name, use_chain=True):
        """Values of `name` from the highest-precedence layer down."""
        yield self.cmdline.get(name, [])
        if use_chain:
            yield self.conf.get(self.chain, {}).get(name, [])
        if not use_chain or not (self.options[name].network_only and self.chain != "main"):
            yield self.conf.get("", {}).get(name, [])

    def is_set(self, name) -> bool:
        return any(self._layers(name))

    def get(self, name, default=None, use_chain=True):
        for values in self._layers(name, use_chain):
            if values:
                return values[-1]
        return default

    def get_all(self, name) -> list:
        out = []
        for values in self._layers(name):
            out.extend(values)
        return out

    def get_list(self, name) -> list:
        """Every value of the highest-precedence layer that sets `name`: a list option given on
        the command line replaces the conf file's values, as a single value does (-device)."""
        for values in self._layers(name):
            if values:
                return list(values)
        return []

    def get_bool(self, name, default: bool, use_chain=True) -> bool:
        value = self.get(name, None, use_chain)
        if value is None:
            return default
        return _interpret_bool(value)

    def get_int(self, name, default: int) -> int:
        value = self.get(name, None)
        if value is None:
            return default
        return _interpret_int(value)


def _interpret_bool(value: str) -> bool:
    if value == "":
        return True
    return _interpret_int(value) != 0


def _interpret_int(value: str) -> int:
    """Core's LocaleIndependentAtoi: leading integer, else 0."""
    s = value.strip()
    digits = ""
    for i, ch in enumerate(s):
        if ch.isdigit() or (i == 0 and ch in "+-"):
            digits += ch
        else:
            break
    try:
        return int(digits)
    except ValueError:
        return 0


def chain_datadir(datadir: str, chain: str) -> str:
    sub = CHAINS[chain].datadir_subdir
    return os.path.join(datadir, sub) if sub else datadir


def load(argv, options, allow_positional=False) -> Args:
    """Command line, then the conf file it names (or the default one)."""
    args = Args(options)
    args.parse_command_line(argv, allow_positional=allow_positional)
    datadir = resolve_datadir(args)
    conf = args.get("conf", None, use_chain=False)
    if conf is not None and conf != "":
        path = conf if os.path.isabs(conf) else os.path.join(datadir, conf)
        args.read_config_file(path, required=True)
    else:
        args.read_config_file(os.path.join(datadir, "quill.conf"), required=False)
    args.select_chain()
    return args


def resolve_datadir(args: Args) -> str:
    value = args.get("datadir", None, use_chain=False)
    if value is None or value == "":
        return default_datadir()
    path = os.path.abspath(os.path.expanduser(value))
    if not os.path.isdir(path):
        raise ConfigError(f'Specified data directory "{value}" does not exist.')
    return path
