"""quill-emu: the Quill firmware under real MicroPython, as a serial port.

    quill-emu [--board rpi_pico|esp32_s3|pyboard] [--target unix|qemu-m0plus|qemu-m4]
              [--heapsize 97K] [--firmware board|files|frozen|romfs] [--frozen]
              [--crypto auto|native|python] [--idle-ms 2000] [--no-restart]
              [--stdio] [--port-file PATH]
              [--approve auto|ask|channel] [--datadir DIR] [--confirm-timeout-ms N]
              [--no-keys] [--seed generate] [--test-mnemonic "WORDS"]
              [--display st7789-240x240|st7789-240x135|ssd1306-128x64|none] [--screen-dir DIR]

Prints the pty path to open (e.g. with pyserial, or quilld -device=PATH) on
its first stdout line, then runs until SIGTERM/SIGINT. With --stdio the
firmware serves this process's own stdin/stdout instead (pipes).

The device models one board (boards/<board>/board.json; getdeviceinfo's
"board" names it): --board, by default the Raspberry Pi Pico (rpi_pico), or the
board a qemu target stands for (qemu-m0plus: the Pico, qemu-m4: the pyboard).
It gets that board's free heap, its firmware loaded as that board loads it (the
Pico and the ESP32-S3 import .mpy files from their filesystem into the heap, the
pyboard runs it frozen into flash), and the native crypto module where that
board's deploy installs one (the Pico), its size taken from the heap as the board
keeps it there. --heapsize, --firmware (or --frozen) and --crypto change one of
these for an experiment: getdeviceinfo then still names the board, and its
heap_free says what the firmware has.

User confirmation (protocol/SPEC.md §8): --approve=auto approves every request
at once (the default); ask asks y/n on this process's controlling terminal;
channel is the test-only approval channel: a test answers by writing
"approve" or "refuse" to <datadir>/confirm-answer once <datadir>/confirm-request
appears (quill.emulator.asker.write_answer). The confirmation policy is kept
in <datadir>/confirm_policy.json, the encrypted seed in <datadir>/seed.bin
(without --datadir: a scratch directory removed at exit).

The screen: --display is the emulated panel (default: the modelled board's own,
quill.emulator.launcher.default_display: st7789-240x240 on the Pico's Waveshare
Pico-LCD-1.3, ssd1306-128x64 on the pyboard, none on the ESP32-S3 DevKitC-1; a
qemu target models its board's: qemu-m0plus the Pico's, qemu-m4 the pyboard's;
none: a device without a display, confirming blind).
The firmware draws every confirmation on it with the same code as a board;
--approve=auto then shows every page and approves, channel waits for a
test's presses (the debug link's debug_press, or the answer file; on a qemu
target, which has no filesystem, the presses only). With
--screen-dir every screen drawn is written as DIR/<6-digit sequence>-<screen>.png
(the panel's native size) and DIR/<same>.txt (its logical text); a qemu target
sends them to quill-emu on the board's second UART (firmware/emulator_frames.py),
which writes the same files.

Signing arithmetic: --crypto=native deploys libsecp256k1 as a native module
(built from ../shared/toolchains into a cache, quill.emulator.natmod, with the
board's tables) and the firmware signs with it; python uses the pure-MicroPython
arithmetic; auto (the default) deploys it where the board's own deploy does
(board.json "natmod") and it can be built. getdeviceinfo's crypto_backend says
which signs. On a qemu target the module is built for that core and put in its
ROMFS.

--firmware=frozen (or --frozen; unix target) runs the firmware frozen into a
unix-port MicroPython built from MicroPython's source and cached
(quill.emulator.frozen), as the pyboard runs it from flash: its bytecode and names
then take no heap. --firmware=files imports .mpy files into the heap, as the Pico
does; romfs runs them in place from a ROMFS image, which no board does.

The firmware answers the seed and key methods (protocol/SPEC.md §9,
firmware/emulator_keys.py), with the seed in --datadir, as every board does;
--no-keys leaves them out. --seed=generate has the device make its own seed at
its first start (12 words from its own randomness, stored without a PIN; the
words never leave the firmware) and keep it in --datadir for later starts.
--test-mnemonic (test-only) starts the device initialised with that BIP39
mnemonic, unlocked and without a PIN: the words are checked and turned into
the BIP39 seed here, and the seed is written to the state directory's
seed.bin in the firmware's own format (quillfw.keys.store, run here under
CPython), as a board's flash would be provisioned. Nothing of it is passed
to the firmware's command line or written to a log.
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading

from quill.emulator.asker import NoTerminal, TerminalAsker
from quill.emulator.launcher import (
    APPROVERS,
    CRYPTO,
    DEFAULT_IDLE_MS,
    DISPLAYS,
    SEED_FILE,
    TARGETS,
    Emulator,
    board_for,
    confirmation_options,
    default_display,
    firmware_command,
    firmware_env,
    generate_seed,
)
from quill.emulator.models import BOARDS, DEFAULT_BOARD, FIRMWARE
from quill.emulator.natmod import NatmodUnavailable


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="quill-emu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=TARGETS, default="unix",
                        help="where the firmware runs: the unix port (default), or a Cortex-M0+ "
                             "(RP2040 stand-in) or Cortex-M4 (pyboard stand-in) under QEMU, built "
                             "from MicroPython's source on first use")
    parser.add_argument("--board", choices=BOARDS,
                        help=f"the board modelled: its heap, firmware loading and crypto module "
                             f"(default: {DEFAULT_BOARD}; on a qemu target the board it stands for)")
    parser.add_argument("--heapsize",
                        help="experiment: MicroPython heap, e.g. 97K (default: the board's)")
    parser.add_argument("--firmware", choices=FIRMWARE, default="board",
                        help="experiment: load the firmware as .mpy files into the heap, frozen, or "
                             "from a ROMFS image (default: as the board does)")
    parser.add_argument("--idle-ms", type=int, default=DEFAULT_IDLE_MS,
                        help="drop a partial frame idle this long (default 2000)")
    parser.add_argument("--no-restart", action="store_true",
                        help="do not restart the firmware when it exits")
    parser.add_argument("--stdio", action="store_true",
                        help="serve this process's stdin/stdout instead of a pty")
    parser.add_argument("--port-file", help="also write the pty path to this file")
    parser.add_argument("--approve", choices=APPROVERS, default="auto",
                        help="who confirms signing: auto (approve at once, default), ask (y/n "
                             "on this terminal), channel (test-only: files in --datadir)")
    parser.add_argument("--datadir", help="the device's data dir, its emulated flash: seed, confirmation "
                                          "policy, approval channel (default: a scratch dir removed at exit)")
    parser.add_argument("--confirm-timeout-ms", type=int,
                        help="how long the device waits for a confirmation (default 120000)")
    parser.add_argument("--crypto", choices=CRYPTO, default="auto",
                        help="signing arithmetic: native (deploy the libsecp256k1 module), python, "
                             "or auto (the default: the module where the board's deploy installs one)")
    parser.add_argument("--frozen", action="store_true",
                        help="the same as --firmware=frozen")
    parser.add_argument("--keys", action=argparse.BooleanOptionalAction, default=True,
                        help="answer the seed and key methods, as every board does (the default; "
                             "--no-keys leaves them out)")
    parser.add_argument("--seed", choices=("generate",),
                        help="generate: the device makes its own seed at its first start and keeps "
                             "it in --datadir (no PIN); later starts keep it")
    parser.add_argument("--display", choices=DISPLAYS,
                        help="the emulated panel (default: the modelled board's own, the Pico's "
                             "st7789-240x240, on a qemu target too); none: a blind device")
    parser.add_argument("--screen-dir", help="write every screen drawn as DIR/<sequence>-<screen>"
                                             ".png and .txt")
    parser.add_argument("--test-mnemonic", metavar="WORDS",
                        help="test only: start initialised with this BIP39 mnemonic, unlocked, "
                             "without a PIN")
    args = parser.parse_args(argv)
    if args.approve == "channel" and not args.datadir and args.target == "unix":
        parser.error("--approve=channel needs --datadir (the channel's files are there)")
    if args.approve == "ask" and args.target != "unix":
        parser.error("--approve=ask needs the unix target (its answers pass through files, and a "
                     "qemu board has no filesystem)")
    if args.frozen:
        args.firmware = "frozen"
    if args.firmware != "board" and args.target != "unix":
        parser.error(f"--{'frozen' if args.frozen else 'firmware'} is for the unix target (qemu-m4's "
                     "firmware is always frozen, qemu-m0plus's in ROMFS)")
    try:
        args.board = board_for(args.target, args.board)
    except ValueError as e:
        parser.error(str(e))
    if args.test_mnemonic is not None and args.target != "unix":
        parser.error("--test-mnemonic needs the unix target (a qemu board has no filesystem to "
                     "provision: its seed is kept in RAM, restore it with seed_restore)")
    if not args.keys and (args.test_mnemonic is not None or args.seed is not None):
        parser.error("--no-keys cannot be combined with --test-mnemonic or --seed")
    if args.seed is not None and args.test_mnemonic is not None:
        parser.error("--seed and --test-mnemonic are exclusive (both provision the seed)")
    if args.seed is not None and args.target != "unix":
        parser.error("--seed needs the unix target (a qemu board has no filesystem to keep it)")
    if args.test_mnemonic is not None and not _valid_mnemonic(args.test_mnemonic):
        parser.error("--test-mnemonic is not a valid BIP39 English mnemonic")
    return args


def _valid_mnemonic(words: str) -> bool:
    from quillfw.keys import bip39
    try:
        bip39.entropy_from_mnemonic(bip39.normalized(words))
    except ValueError:
        return False
    return True


def write_test_seed(datadir: str, words: str) -> None:
    """Provision the emulated flash: the BIP39 seed of words (no passphrase),
    stored without a PIN."""
    from quillfw.keys import bip39
    from quillfw.keys.methods import DEFAULT_MAX_PIN_ATTEMPTS, DEFAULT_PIN_ROUNDS
    from quillfw.keys.store import SeedStore
    store = SeedStore(os.path.join(datadir, SEED_FILE))
    store.wipe()
    store.save(bip39.seed_from_mnemonic(words), "", DEFAULT_PIN_ROUNDS, DEFAULT_MAX_PIN_ATTEMPTS)


def display_options(display: str, screen_dir: str | None) -> list[str]:
    """main_emulator.py's options for the panel and the screens' folder (made here)."""
    options = ["--display", display]
    if screen_dir and display == "none":
        print("quill-emu: --screen-dir without a display draws nothing (give --display)", file=sys.stderr)
    if screen_dir:
        os.makedirs(screen_dir, exist_ok=True)
        options += ["--screen-dir", os.path.abspath(screen_dir)]
    return options


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    scratch = None
    if not args.datadir:
        scratch = args.datadir = tempfile.mkdtemp(prefix="quill-emu-")
    os.makedirs(args.datadir, exist_ok=True)
    if args.test_mnemonic is not None:
        write_test_seed(args.datadir, args.test_mnemonic)
    asker = None
    try:
        if args.approve == "ask":
            asker = TerminalAsker(args.datadir).start()
        confirmation = confirmation_options(args.approve, args.datadir, args.confirm_timeout_ms)
        confirmation += display_options(args.display or default_display(args.board), args.screen_dir)
        if args.keys:
            confirmation.append("--keys")   # main_emulator.py's option, beside the confirmation's
        if args.stdio:
            return _exec_stdio(args, confirmation, asker)
        return _serve(args, confirmation)
    except NoTerminal as e:
        print(f"quill-emu: {e}", file=sys.stderr)
        return 2
    except NatmodUnavailable as e:
        print(f"quill-emu: --crypto=native: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:     # a qemu target or frozen port that cannot be built here, a seed not made
        print(f"quill-emu: {e}", file=sys.stderr)
        return 2
    finally:
        if asker is not None:
            asker.stop()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _exec_stdio(args: argparse.Namespace, confirmation: list[str], asker: TerminalAsker | None) -> int:
    """--stdio: become the firmware, serving this process's stdin/stdout."""
    if asker is not None:
        print("quill-emu: --approve=ask cannot be combined with --stdio", file=sys.stderr)
        return 2
    command = firmware_command(args.heapsize, args.idle_ms, args.board, confirmation=confirmation,
                               crypto=args.crypto, target=args.target, firmware=args.firmware)
    if args.seed is not None:
        generate_seed(command)
    os.execve(command[0], command, firmware_env())


def _serve(args: argparse.Namespace, confirmation: list[str]) -> int:
    """The firmware behind a pty until SIGTERM/SIGINT (or its exit, with --no-restart)."""
    emulator = Emulator(args.heapsize, args.idle_ms, args.board, restart=not args.no_restart,
                        confirmation=confirmation, crypto=args.crypto, target=args.target,
                        firmware=args.firmware, seed=args.seed)
    done = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: done.set())
    try:
        port = emulator.start()
        if args.port_file:
            with open(args.port_file, "w") as f:
                f.write(port + "\n")
        print(port, flush=True)
        while not done.wait(0.2):
            if args.no_restart and not emulator.alive():
                break
    finally:
        emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
