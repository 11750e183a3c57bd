"""A previous transaction, pushed in pieces, checked against the outpoint it
pays (BIP174's non_witness_utxo, the answer to the legacy and BIP143 amount
attacks).

    p = PrevTx(vout)
    p.feed(chunk) ...          the transaction's serialization WITHOUT witness
                               (BIP144's marker is refused), in any pieces
    txid, txout_hash = p.finish()

finish() answers the txid (double SHA-256 of every byte fed, internal order)
and the SHA-256 of output `vout`'s serialization (amount || compact size ||
script). The parser walks the serialization itself, so the bytes that are
hashed are exactly the bytes that are parsed: a host cannot shift where the
outputs start. It keeps O(1) state: scripts are hashed as they pass, never
held. Malformed data raises ValueError.
"""
import hashlib

# the parser's stages (what the next bytes are)
_VERSION = 0
_COUNT = 1          # a compact size: the number of inputs or outputs, or a script's length
_OUTPOINT = 2
_SEQUENCE = 3
_AMOUNT = 4
_SCRIPT = 5
_LOCKTIME = 6
_DONE = 7

_MAX_COUNT = 100000     # more inputs or outputs than a block can hold
_MAX_SCRIPT = 4000000   # a block's weight


class PrevTx:
    def __init__(self, vout):
        self._hash = hashlib.sha256()
        self._out = None            # the hasher of output `vout`, while it passes
        self._out_digest = None
        self.vout = vout            # the output whose hash finish() answers
        self._stage = _VERSION
        self._need = 4
        self._buf = bytearray()
        self._count_for = None      # what the compact size being read counts
        self._left = 0              # inputs or outputs still to read
        self._index = 0             # the current output's index
        self._skip = 0              # script bytes still to pass
        self._outputs = False       # past the inputs

    def feed(self, data):
        if self._stage == _DONE:
            raise ValueError("bytes after the previous transaction's locktime")
        self._hash.update(data)
        pos, end = 0, len(data)
        while pos < end:
            if self._stage == _SCRIPT:
                take = min(self._skip, end - pos)
                if self._out is not None:
                    self._out.update(data[pos:pos + take])
                self._skip -= take
                pos += take
                if self._skip == 0:
                    self._script_done()
                continue
            take = min(self._need - len(self._buf), end - pos)
            self._buf.extend(data[pos:pos + take])
            pos += take
            if len(self._buf) == self._need:
                field = bytes(self._buf)
                self._buf = bytearray()
                self._field(field)
                if self._stage == _DONE and pos < end:
                    raise ValueError("bytes after the previous transaction's locktime")

    def finish(self):
        if self._stage != _DONE:
            raise ValueError("the previous transaction is incomplete")
        if self._out_digest is None:
            raise ValueError("the previous transaction has no output %d" % self.vout)
        return hashlib.sha256(self._hash.digest()).digest(), self._out_digest

    # ---- the grammar: version n_in (outpoint script sequence)* n_out (amount script)* locktime

    def _expect(self, stage, need):
        self._stage = stage
        self._need = need

    def _count(self, what):
        self._count_for = what
        self._expect(_COUNT, 1)

    def _field(self, field):
        stage = self._stage
        if stage == _VERSION:
            self._count("inputs")
        elif stage == _COUNT:
            if len(field) == 1 and field[0] >= 0xFD:
                self._need = 1 + (2 if field[0] == 0xFD else 4 if field[0] == 0xFE else 8)
                self._buf.extend(field)
                return
            value = int.from_bytes(field[1:], "little") if len(field) > 1 else field[0]
            self._counted(value, field)
        elif stage == _OUTPOINT:
            self._count("script")
        elif stage == _SEQUENCE:
            self._next_input()
        elif stage == _AMOUNT:
            if self._index == self.vout:
                self._out = hashlib.sha256(field)
            self._count("script")
        elif stage == _LOCKTIME:
            self._stage = _DONE

    def _counted(self, value, field):
        what = self._count_for
        if what == "script":
            if value > _MAX_SCRIPT:
                raise ValueError("a script of the previous transaction is too large")
            if self._out is not None:
                self._out.update(field)
            self._skip = value
            self._stage = _SCRIPT
            if value == 0:
                self._script_done()
            return
        if value > _MAX_COUNT:
            raise ValueError("the previous transaction has too many %s" % what)
        if what == "inputs":
            if value == 0:
                raise ValueError("send the previous transaction without its witnesses")
            self._left = value
            self._expect(_OUTPOINT, 36)
        else:
            self._left = value
            self._index = 0
            if value:
                self._expect(_AMOUNT, 8)
            else:
                self._expect(_LOCKTIME, 4)

    def _script_done(self):
        if not self._outputs:
            self._expect(_SEQUENCE, 4)
            return
        if self._out is not None:
            self._out_digest = self._out.digest()
            self._out = None
        self._index += 1
        self._left -= 1
        if self._left:
            self._expect(_AMOUNT, 8)
        else:
            self._expect(_LOCKTIME, 4)

    def _next_input(self):
        self._left -= 1
        if self._left:
            self._expect(_OUTPOINT, 36)
        else:
            self._outputs = True
            self._count("outputs")
