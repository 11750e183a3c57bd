"""Bitcoin transaction pieces: their serialization, and a reader that parses a
serialized transaction from a stream one piece at a time.

Plain values are used everywhere:
    txid      32 bytes in INTERNAL byte order (as serialized; the reverse of
              what RPC and block explorers print)
    vout      int, 0..0xffffffff
    sequence  int, 0..0xffffffff
    amount    int satoshis (int64; legacy sighash writes -1 for blanked outputs)
    script    bytes

Serialization (Core's CompactSize, COutPoint, CTxOut):
    compact_size(n) -> bytes
    u32le(n) -> 4 bytes               n & 0xffffffff, so signed values work too
    i64le(n) -> 8 bytes               two's complement
    outpoint(txid, vout) -> 36 bytes
    txout(amount, script_pubkey) -> bytes    amount || compact_size || script
    hash_txout(h, amount, script_pubkey)     the same bytes fed to the hash h, no copy
    read_compact_size(buf, pos) -> (n, next_pos)   from bytes in memory

Parsing (BIP144 marker/flag understood, witnesses skipped):
    r = TxReader(stream, max_script=MAX_SCRIPT_SIZE)  # stream has read(n)
    version, n_inputs = r.read_header()
    r.read_input()  -> (txid, vout, script_sig, sequence)    n_inputs times
    n_outputs = r.read_output_count()
    r.read_output() -> (amount, script_pubkey)               n_outputs times
    r.read_witness() -> [item bytes]     per input, only when r.has_witness
    locktime = r.read_locktime()         (skips the witnesses not read)
    parse_tx(data) -> (version, inputs, outputs, locktime)   whole-buffer helper
        inputs: [(txid, vout, sequence)], outputs: [(amount, script_pubkey)]
Malformed or oversized data raises ValueError.
"""
import io

from quillfw.limits import MAX_SCRIPT_SIZE

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF


def compact_size(n):
    if n < 0xFD:
        return bytes((n,))
    if n <= 0xFFFF:
        return b"\xfd" + n.to_bytes(2, "little")
    if n <= _M32:
        return b"\xfe" + n.to_bytes(4, "little")
    return b"\xff" + n.to_bytes(8, "little")


def read_compact_size(buf, pos):
    first = buf[pos]
    if first < 0xFD:
        return first, pos + 1
    width = 2 if first == 0xFD else 4 if first == 0xFE else 8
    end = pos + 1 + width
    if end > len(buf):
        raise ValueError("truncated compact size")
    return int.from_bytes(buf[pos + 1:end], "little"), end


def u32le(n):
    return (n & _M32).to_bytes(4, "little")


def i64le(n):
    return (n & _M64).to_bytes(8, "little")


def outpoint(txid, vout):
    if len(txid) != 32:
        raise ValueError("txid must be 32 bytes")
    return bytes(txid) + u32le(vout)


def txout(amount, script_pubkey):
    return i64le(amount) + compact_size(len(script_pubkey)) + bytes(script_pubkey)


def hash_txout(h, amount, script_pubkey):
    """Feed txout(amount, script_pubkey) to the hash h piece by piece: a script of
    thousands of bytes is never copied into a second buffer."""
    h.update(i64le(amount))
    h.update(compact_size(len(script_pubkey)))
    h.update(script_pubkey)


class TxReader:
    """Reads a serialized transaction from `stream` piece by piece, in order."""

    def __init__(self, stream, max_script=MAX_SCRIPT_SIZE):
        self._s = stream
        self._max_script = max_script
        self._n_inputs = 0
        self._witnesses_read = 0
        self.has_witness = False

    def _read(self, n):
        data = self._s.read(n)
        if data is None or len(data) != n:
            raise ValueError("truncated transaction")
        return data

    def _compact_size(self):
        first = self._read(1)[0]
        if first < 0xFD:
            return first
        width = 2 if first == 0xFD else 4 if first == 0xFE else 8
        return int.from_bytes(self._read(width), "little")

    def _script(self):
        n = self._compact_size()
        if n > self._max_script:
            raise ValueError("script larger than %d bytes" % self._max_script)
        return self._read(n)

    def read_header(self):
        version = int.from_bytes(self._read(4), "little")
        n = self._compact_size()
        if n == 0:
            # BIP144: marker 0x00 then flag 0x01 announce witness data.
            if self._read(1)[0] != 1:
                raise ValueError("unknown segwit flag")
            self.has_witness = True
            n = self._compact_size()
        self._n_inputs = n
        return version, n

    def read_input(self):
        txid = self._read(32)
        vout = int.from_bytes(self._read(4), "little")
        script_sig = self._script()
        sequence = int.from_bytes(self._read(4), "little")
        return txid, vout, script_sig, sequence

    def read_output_count(self):
        return self._compact_size()

    def read_output(self):
        amount = int.from_bytes(self._read(8), "little")
        if amount >= 1 << 63:
            amount -= 1 << 64
        return amount, self._script()

    def read_witness(self):
        if not self.has_witness or self._witnesses_read >= self._n_inputs:
            raise ValueError("no witness left to read")
        self._witnesses_read += 1
        return [self._script() for _ in range(self._compact_size())]

    def read_locktime(self):
        while self.has_witness and self._witnesses_read < self._n_inputs:
            self.read_witness()
        return int.from_bytes(self._read(4), "little")


def parse_tx(data):
    r = TxReader(io.BytesIO(data), max_script=len(data))
    version, n_in = r.read_header()
    inputs = []
    for _ in range(n_in):
        txid, vout, _script_sig, sequence = r.read_input()
        inputs.append((txid, vout, sequence))
    outputs = [r.read_output() for _ in range(r.read_output_count())]
    locktime = r.read_locktime()
    return version, inputs, outputs, locktime
