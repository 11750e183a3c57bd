"""The screens the user confirms (quillfw.ui.screen.Screen), built on the device
from what the device itself computed: every address from its scriptPubKey
(quillfw.psbt.address, for the session's network), every amount formatted
here. The host supplies no text shown as an address, an amount or a fee; the
one text it does supply (a multisig wallet's name) is a host() part.

    review(record, hash_type)      a transaction (quillfw.signing.confirm.Confirmation's record)
    address(address, path, name)   an address the device derived (display_address)
    policy(old, new)               a looser confirmation policy
    signed_message(path, text)     a message to sign (its text is the host's: marked)
    chain(name)                    the chain the device keeps (set_chain)
    message(name, title, lines, action)   wipe, errors, PIN and seed steps
"""
from quillfw.ui.screen import Screen, host

SIGHASH_ANYONECANPAY = 0x80
HIGH_FEE_BTC_SATS = 10000000        # Core's default -maxtxfee (0.1 BTC)
HIGH_FEE_PERCENT = 5                # Coldcard's "big fee": over 5 % of what is sent


def btc(sats):
    """Core's BTC amount: 8 decimals, a minus sign when negative."""
    sign = "-" if sats < 0 else ""
    sats = abs(sats)
    return "%s%d.%08d" % (sign, sats // 100000000, sats % 100000000)


def _pushes(script):
    """The data pushes of an OP_RETURN script as hex, or None when it holds anything else."""
    out, i, n = [], 1, len(script)
    while i < n:
        op = script[i]
        if 1 <= op <= 75:
            size, i = op, i + 1
        elif op == 0x4C and i + 1 < n:
            size, i = script[i + 1], i + 2
        elif op == 0x4D and i + 2 < n:
            size, i = script[i + 1] | script[i + 2] << 8, i + 3
        else:
            return None
        if i + size > n:
            return None
        out.append(bytes(script[i:i + size]).hex())
        i += size
    return out


def destination(script, network):
    """An output's destination as Core's decoderawtransaction names it: its address,
    OP_RETURN and the data's hex, or the script's hex when it has no address."""
    from quillfw.psbt.address import address
    text = address(script, network)
    if text is not None:
        return text
    if len(script) and script[0] == 0x6A:
        pushes = _pushes(script)
        if pushes is not None:
            return " ".join(["OP_RETURN"] + pushes)
    return "Script " + bytes(script).hex()


def sighash_warning(hash_type):
    """SIGHASH_NONE/SINGLE: outputs can be changed after signing; ANYONECANPAY: inputs
    can be added."""
    base = hash_type & 0x1F
    names = []
    if base == 2:
        names.append("SIGHASH_NONE")
    elif base == 3:
        names.append("SIGHASH_SINGLE")
    if hash_type & SIGHASH_ANYONECANPAY:
        names.append("ANYONECANPAY")
    if not names:
        return None
    what = "outputs not committed" if base in (2, 3) else "other inputs not committed"
    return "Warning: %s (sighash 0x%02x, %s)" % (what, hash_type, "|".join(names))


def _rate(fee, weight):
    """sat/vB with one decimal, rounded down (vbytes from the estimated weight)."""
    vbytes = (weight + 3) // 4
    tenths = fee * 10 // vbytes
    return "%d.%d" % (tenths // 10, tenths % 10)


def _output(index, n, amount, script, change, network):
    return ("%s %d of %d:" % ("Change" if change else "Output", index + 1, n),
            destination(script, network), btc(amount) + " BTC")


class Outputs:
    """A review's items: every output, read from the outputs' file one at a time at each
    pass over them (the heap holds one output's text, whatever their number), then the rest."""

    def __init__(self, path, n, network, rest):
        self.path = path
        self.n = n
        self.network = network
        self.rest = rest

    def __iter__(self):
        with open(self.path, "rb") as f:
            for index in range(self.n):
                amount = int.from_bytes(f.read(8), "little")
                head = f.read(3)
                yield _output(index, self.n, amount, f.read(head[1] | head[2] << 8), head[0] == 1,
                              self.network)
        for item in self.rest:
            yield item


def review(conf, hash_type=1):
    """conf: quillfw.signing.confirm.Confirmation: its counts, its outputs' file (or
    the first outputs in RAM without one), and its review record of the session's first
    pass (outputs, others, change total, whether an input's sequence makes the locktime
    apply, estimated weight, network, locktime)."""
    n_in, total_in, n_out, total_out = conf.counts
    outputs, others, change_total, nonfinal, weight, network, locktime = conf.review
    # more outputs than RAM held, and their file: all read back from it, at each pass
    spooled = conf.outputs is not None and others[0]
    items = []
    for index, amount, script, change in ([] if spooled else outputs):
        items.append(_output(index, n_out, amount, script, change, network))
    if others[0] and not spooled:
        items.append(("Outputs %d to %d (not listed):" % (n_out - others[0] + 1, n_out),
                      btc(others[1]) + " BTC"))
    fee = total_in - total_out
    if total_in and fee >= 0:
        items.append(("Fee:", btc(fee) + " BTC"))
        items.append(("Fee rate: ~%s sat/vB" % _rate(fee, weight),))
        sent = total_out - change_total
        if fee > HIGH_FEE_BTC_SATS or fee * 100 > HIGH_FEE_PERCENT * max(sent, 1):
            items.append(("Warning: high fee",))
    else:
        items.append(("Fee: unknown (input amounts not given)",))
    items.append(("Inputs: %d, %s BTC" % (n_in, btc(total_in)),))
    if locktime and nonfinal:
        kind = "block" if locktime < 500000000 else "time"
        items.append(("Warning: locktime %s %d: not final until then" % (kind, locktime),))
    warning = sighash_warning(hash_type)
    if warning:
        items.append((warning,))
    if conf.outputs is not None:
        conf.close_outputs()
        if spooled:
            items = Outputs(conf.outputs, n_out, network, items)
    return Screen("review", "Send bitcoin", items, "Sign")


def address(text, path=None, name=None):
    items = [("Address:", text)]
    if name is not None:
        items.append(("Wallet (named by the host):", host(name)))
    if path is not None:
        items.append(("Path:", path))
    return Screen("address", "Check address", items, "Confirm")


def policy(old, new):
    return Screen("policy", "Confirm less", [("Change policy from", old, "to", new)], "Change")


def signed_message(path, text):
    return Screen("message", "Sign message", [("Path:", path), ("Message (from the host):", host(text))],
                  "Sign")


def chain(name):
    return Screen("chain", "Use chain", [("Chain:", name)], "Use")


def message(name, title, lines, action="OK"):
    return Screen(name, title, [(line,) for line in lines], action)
