"""A stand-in device for the heap test, run by the MicroPython unix port.

Reads one message per line from stdin, hands it to quillfw.signing.session.Session and
answers one line on stdout, like the firmware's serving loop but with a plain
text encoding (hex for bytes, "-" for empty). After every message it runs the
garbage collector and records the live heap, so `stats` reports the peak heap
the session needed while the transaction streamed through it.

    begin <version> <locktime> <n_in> <n_out> <alg,alg>   -> ok
    key <secret hex> <compressed 0|1>                     -> ok <index>
    in <txid> <vout> <seq> <amount> <spk>                 -> ok <token>
    out <amount> <spk>                                    -> ok <token>
    v0 <i> <txid> <vout> <seq> <amount> <spk> <token> <script_code> <ht> <key>
       [<out amount> <out spk> <out token>]   (SIGHASH_SINGLE)  -> ok <signature>
    lp <i> <script_code> <ht> <key>                       -> ok   (legacy pass)
    lf                                                    -> ok <signature>
    end                                                   -> ok
    stats                                 -> ok <baseline> <peak_live> <peak_before_gc> <heap>
(baseline: live heap with the modules loaded and an idle session)
Errors answer "err <code> <message>".
"""
import gc
import sys

from quillfw.signing.session import Session, SessionError


def unhex(s):
    return b"" if s == "-" else bytes.fromhex(s)


def tohex(b):
    return b.hex() if b else "-"


def handle(s, words):
    cmd = words[0]
    if cmd == "begin":
        s.begin(int(words[1]), int(words[2]), int(words[3]), int(words[4]), words[5].split(","))
        return ""
    if cmd == "key":
        return str(s.add_key(unhex(words[1]), words[2] == "1"))
    if cmd == "in":
        return tohex(s.add_input(unhex(words[1]), int(words[2]), int(words[3]), int(words[4]),
                                 unhex(words[5])))
    if cmd == "out":
        return tohex(s.add_output(int(words[1]), unhex(words[2])))
    if cmd == "v0":
        txin = (unhex(words[2]), int(words[3]), int(words[4]), int(words[5]), unhex(words[6]))
        txout = txout_token = None
        if len(words) > 11:
            txout = (int(words[11]), unhex(words[12]))
            txout_token = unhex(words[13])
        return tohex(s.sign_segwit_v0(int(words[1]), txin, unhex(words[7]), unhex(words[8]),
                                      int(words[9]), int(words[10]), txout, txout_token))
    if cmd == "lp":
        s.begin_legacy_pass(int(words[1]), unhex(words[2]), int(words[3]), int(words[4]))
        return ""
    if cmd == "lf":
        return tohex(s.finish_legacy_pass())
    if cmd == "end":
        s.end()
        return ""
    raise SessionError("bad_value", "unknown command")


def main():
    gc.collect()
    heap = gc.mem_alloc() + gc.mem_free()
    peak_live = peak_before_gc = 0
    s = Session()
    gc.collect()
    baseline = gc.mem_alloc()
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        words = line.split()
        if words[0] == "stats":
            print("ok", baseline, peak_live, peak_before_gc, heap)
            continue
        try:
            reply = "ok " + handle(s, words)
        except SessionError as e:
            reply = "err " + e.code + " " + e.message
        del words, line
        before = gc.mem_alloc()
        if before > peak_before_gc:
            peak_before_gc = before
        gc.collect()
        live = gc.mem_alloc()
        if live > peak_live:
            peak_live = live
        print(reply)


main()
