"""The streaming signing session: the host pushes a transaction piece by piece,
the device keeps O(1) state per transaction and returns signatures.

Message sequence (one method call per protocol message):

  IDLE    begin(version, locktime, n_inputs, n_outputs, algorithms)     -> None
  INPUTS  add_key(secret32, compressed=True)                            -> key index
          (add_key is accepted in every state but IDLE and a pass)
  INPUTS  add_input(txid, vout, sequence, amount, script_pubkey)        -> token16
          ... n_inputs times, then
  OUTPUTS add_output(amount, script_pubkey)                             -> token16
          ... n_outputs times; after the last one the state is
  READY   sign_segwit_v0(...) / sign_taproot(...)                       -> signature
          begin_legacy_pass(...)  -> PASS: the host streams every input and
                                     output again with add_input/add_output,
                                     then finish_legacy_pass() -> signature
          end()                                                         -> IDLE
  Any state: abort() -> IDLE. Any error raises SessionError and wipes the session
  (state IDLE, keys zeroed), so the host starts again with begin().

Values: txid is 32 bytes in internal (serialized) order; amounts are satoshis;
algorithms is a list naming the sighash algorithms the host will ask for:
"legacy", "segwit_v0", "taproot". Signatures come back as the witness/scriptSig
element: DER + hash-type byte (ECDSA), or 64 bytes + hash-type byte unless
SIGHASH_DEFAULT (Schnorr).

Why tokens: the device cannot remember every input's amount, but a BIP143
signature commits to it, and the amounts the user approved must be the ones
signed. add_input and add_output return a 16-byte HMAC (key random per session)
over the index and the pushed values; a sign request that repeats an input
(txin = (txid, vout, sequence, amount, script_pubkey)) or an output
(txout = (amount, script_pubkey)) must bring its token, else the request is
refused with "transaction changed during signing". A legacy preimage needs the
whole transaction, so legacy inputs are signed during a second streamed pass
whose running digest must equal the first pass's.

Sign requests:
  sign_segwit_v0(input_index, txin, txin_token, script_code, hash_type, key_index,
                 txout=None, txout_token=None, allow_single_without_output=False)
      txout/txout_token: output[input_index], needed for SIGHASH_SINGLE
  sign_taproot(input_index, hash_type, key_index, merkle_root=None, tweak=True,
               leaf_hash=None, codesep_pos=0xFFFFFFFF, annex=None, aux=None,
               txin=None, txin_token=None, txout=None, txout_token=None)
      key path: tweak=True signs with the BIP341 tweak of merkle_root (None is
      the BIP86 tweak); tweak=False signs with the key as is. leaf_hash given:
      script path, key used as is. txin/txin_token needed with ANYONECANPAY.
      aux: 32 bytes of BIP340 aux randomness; default zeros, as Core signs.
  begin_legacy_pass(input_index, script_code, hash_type, key_index,
                    allow_single_without_output=False)
  finish_legacy_pass() -> signature
Legacy and v0 hash types: 0x01-0x03, 0x81-0x83. SIGHASH_SINGLE without an output
at the input's index is refused unless allow_single_without_output is True.
A P2PKH-form script code (OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG)
must pay to the signing key (compressed or not as add_key said). Segwit v0
refuses uncompressed keys, as Core's signer does.

Error codes (SessionError.code): out_of_order, count_mismatch, limit_exceeded,
bad_value, bad_key, wrong_key, single_without_output, not_declared, tx_changed.
Security: secrets live in one preallocated bytearray, are copied only into
short-lived bytearrays that are zeroed after use, and never appear in a return
value, error, repr or log. The arithmetic itself (ints) is not constant-time
and its intermediate ints cannot be wiped; see quillfw.crypto.secp256k1.
"""
# Heap: where a board loads its code into RAM (the filesystem's .mpy files: the Pico, the
# ESP32-S3), the signers and their sighash algorithms (ecdsa, schnorr, sighash.segwit_v0,
# .taproot, .legacy: ~16 KB of bytecode) are imported by the first signature that needs them,
# after the user's review, not with the session: the Pico's heap holds the session and the
# review's screens, or the session and its signers, not all three. A firmware frozen into flash
# (the pyboard) imports them with this module, while the heap is whole: they cost it only their
# dictionaries, which a signature mid-session might find no block for ('Out of memory' at the
# first legacy input with 19 KB free, fragmented).
import hashlib
import os

from quillfw.compat import const
from quillfw.consensus import MAX_MONEY, SIGHASH_SINGLE
from quillfw.crypto import secp256k1 as ec
from quillfw.crypto.hashes import hash160
from quillfw.limits import MAX_INPUTS, MAX_KEYS, MAX_OUTPUTS, MAX_SCRIPT_SIZE
from quillfw.sighash.txdigests import TxDigests
from quillfw.sighash.txstream import compact_size, i64le, outpoint, u32le

# .mpy files on a filesystem are loaded into RAM; frozen modules (named by their source) and a
# ROMFS image (mounted at /rom, run in place) keep their code in flash
CODE_IN_RAM = __file__.endswith(".mpy") and not __file__.startswith("/rom")
if not CODE_IN_RAM:
    from quillfw.crypto import ecdsa, schnorr  # noqa: F401
    from quillfw.sighash import legacy, segwit_v0, taproot  # noqa: F401

IDLE = "idle"
INPUTS = "inputs"
OUTPUTS = "outputs"
READY = "ready"
PASS_INPUTS = "pass_inputs"
PASS_OUTPUTS = "pass_outputs"
PASS_DONE = "pass_done"

ALGORITHMS = ("legacy", "segwit_v0", "taproot")
ECDSA_HASH_TYPES = (0x01, 0x02, 0x03, 0x81, 0x82, 0x83)
TOKEN_SIZE = const(16)
TX_CHANGED = "transaction changed during signing"

_M32 = 0xFFFFFFFF


class SessionError(Exception):
    """One error type for the session: a stable short code and a clear message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def _guarded(method):
    """Run a public method; on any error wipe the session and raise SessionError.
    Messages of non-session errors come from this firmware's own modules, which
    never put key material in them."""
    def run(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except SessionError:
            self._wipe()
            raise
        except MemoryError:
            self._wipe()
            raise       # the dispatcher's OUT_OF_MEMORY reply, with the request's id
        except (ValueError, TypeError, IndexError, KeyError, ZeroDivisionError) as e:
            self._wipe()
            raise SessionError("bad_value", "invalid request: %s" % e) from None
    return run


def _uint(name, value, maximum):
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= maximum:
        raise SessionError("bad_value", "%s must be an integer in 0..%d" % (name, maximum))
    return value


def _bytes(name, value, size=None, limit=MAX_SCRIPT_SIZE):
    """value, checked; a memoryview (a long byte string of the request being
    handled, quillfw.wire.cbor) is used as it is, valid for this request only."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise SessionError("bad_value", "%s must be bytes" % name)
    if size is not None and len(value) != size:
        raise SessionError("bad_value", "%s must be %d bytes" % (name, size))
    if len(value) > limit:
        raise SessionError("limit_exceeded", "%s larger than %d bytes" % (name, limit))
    return value if isinstance(value, memoryview) else bytes(value)


def _same(a, b):
    # Compare every byte so the time does not tell where a forged token differs.
    if len(a) != len(b):
        return False
    diff = 0
    for i in range(len(a)):
        diff |= a[i] ^ b[i]
    return diff == 0


def _p2pkh_hash(script_code):
    """The 20-byte hash of an OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG
    script, or None for any other script."""
    if (len(script_code) == 25 and script_code[:3] == b"\x76\xa9\x14"
            and script_code[23:] == b"\x88\xac"):
        return script_code[3:23]
    return None


def _wipe_bytes(buf):
    for i in range(len(buf)):
        buf[i] = 0


class Session:
    def __init__(self, max_keys=MAX_KEYS):
        """max_keys: key slots (a caller that holds one key at a time needs one)."""
        self._max_keys = max_keys
        self._keys = bytearray(32 * max_keys)   # preallocated: never reallocated, so never copied
        self._compressed = bytearray(max_keys)
        # each key's HASH160, filled when a P2PKH script code first names it (a flag
        # byte per slot): kept in one block, not as small objects spread over the heap
        self._pubkey_hashes = bytearray(20 * max_keys)
        self._pubkey_hashed = bytearray(max_keys)
        self._mac_key = bytearray(32)
        # HMAC-SHA256's key blocks (RFC 2104), so a token is hashed from the record's
        # fields as they are, never from a joined copy of a large script
        self._ipad = bytearray(64)
        self._opad = bytearray(64)
        self._n_keys = 0
        self._state = IDLE
        self._reset_tx()

    def _reset_tx(self):
        self._state = IDLE
        self._n_inputs = self._n_outputs = 0
        self._inputs_seen = self._outputs_seen = 0
        self._algorithms = ()
        self._header = None
        self._digests = None
        self._running = None
        self._tx_digest = None
        self._legacy = None
        self._legacy_request = None

    def _wipe(self):
        _wipe_bytes(self._mac_key)
        _wipe_bytes(self._ipad)
        _wipe_bytes(self._opad)
        self.forget_keys()
        self._reset_tx()

    def __repr__(self):
        return "<Session %s inputs=%d/%d outputs=%d/%d keys=%d>" % (
            self._state, self._inputs_seen, self._n_inputs, self._outputs_seen,
            self._n_outputs, self._n_keys)

    @property
    def state(self):
        return self._state

    @property
    def inputs_seen(self):
        return self._inputs_seen

    @property
    def outputs_seen(self):
        return self._outputs_seen

    def _expect(self, *states):
        if self._state not in states:
            raise SessionError("out_of_order", "unexpected message in state %s" % self._state)

    # --- first pass ---------------------------------------------------------

    @_guarded
    def begin(self, version, locktime, n_inputs, n_outputs, algorithms):
        self._expect(IDLE)
        _uint("version", version, _M32)
        _uint("locktime", locktime, _M32)
        _uint("n_inputs", n_inputs, _M32)
        _uint("n_outputs", n_outputs, _M32)
        if n_inputs > MAX_INPUTS:
            raise SessionError("limit_exceeded", "more than %d inputs" % MAX_INPUTS)
        if n_outputs > MAX_OUTPUTS:
            raise SessionError("limit_exceeded", "more than %d outputs" % MAX_OUTPUTS)
        if n_inputs == 0:
            raise SessionError("bad_value", "a transaction needs at least one input")
        if not isinstance(algorithms, (list, tuple)) or not algorithms:
            raise SessionError("bad_value", "algorithms must be a non-empty list")
        for name in algorithms:
            if name not in ALGORITHMS:
                raise SessionError("bad_value", "unknown sighash algorithm %r" % (name,))
        self._algorithms = tuple(algorithms)
        self._n_inputs = n_inputs
        self._n_outputs = n_outputs
        self._mac_key[:] = os.urandom(32)
        for i in range(64):
            k = self._mac_key[i] if i < 32 else 0
            self._ipad[i] = k ^ 0x36
            self._opad[i] = k ^ 0x5C
        mask = 0
        for name in self._algorithms:
            mask |= 1 << ALGORITHMS.index(name)
        self._header = (u32le(version) + u32le(locktime) + u32le(n_inputs) + u32le(n_outputs)
                        + bytes((mask,)))
        self._digests = TxDigests(version, locktime, "taproot" in self._algorithms)
        self._start_pass(INPUTS)

    def _start_pass(self, state):
        self._running = hashlib.sha256(self._header)
        self._inputs_seen = self._outputs_seen = 0
        self._state = state

    @_guarded
    def add_key(self, secret32, compressed=True):
        if self._state == IDLE or self._state in (PASS_INPUTS, PASS_OUTPUTS, PASS_DONE):
            raise SessionError("out_of_order", "unexpected key in state %s" % self._state)
        if self._n_keys >= self._max_keys:
            raise SessionError("limit_exceeded", "more than %d keys" % self._max_keys)
        if not isinstance(secret32, (bytes, bytearray)) or len(secret32) != 32:
            raise SessionError("bad_key", "a key must be a 32-byte secret")
        try:
            ec.scalar_from_secret(secret32)
        except ValueError:
            raise SessionError("bad_key", "the key is not a valid secp256k1 secret") from None
        i = self._n_keys
        self._keys[32 * i:32 * i + 32] = secret32
        self._compressed[i] = 1 if compressed else 0
        self._n_keys = i + 1
        return i

    # A record is the fields a token covers, in order; its bytes are their concatenation.
    def _input_record(self, index, txid, vout, sequence, amount, script_pubkey):
        return (b"I", u32le(index), outpoint(txid, vout), u32le(sequence), i64le(amount),
                compact_size(len(script_pubkey)), script_pubkey)

    def _output_record(self, index, amount, script_pubkey):
        return b"O", u32le(index), i64le(amount), compact_size(len(script_pubkey)), script_pubkey

    def _token(self, record, running=None):
        """HMAC-SHA256(mac key, record)[:16], the record also fed to running if given."""
        inner = hashlib.sha256(self._ipad)
        for field in record:
            inner.update(field)
            if running is not None:
                running.update(field)
        outer = hashlib.sha256(self._opad)
        outer.update(inner.digest())
        return outer.digest()[:TOKEN_SIZE]

    @_guarded
    def add_input(self, txid, vout, sequence, amount, script_pubkey):
        if self._state in (OUTPUTS, PASS_OUTPUTS) and self._outputs_seen == 0:
            raise SessionError("count_mismatch", "more inputs than the %d declared" % self._n_inputs)
        self._expect(INPUTS, PASS_INPUTS)
        txid = _bytes("txid", txid, 32)
        _uint("vout", vout, _M32)
        _uint("sequence", sequence, _M32)
        _uint("amount", amount, MAX_MONEY)
        script_pubkey = _bytes("script_pubkey", script_pubkey)
        i = self._inputs_seen
        token = self._token(self._input_record(i, txid, vout, sequence, amount, script_pubkey),
                            self._running)
        if self._state == INPUTS:
            self._digests.add_input(txid, vout, sequence, amount, script_pubkey)
        elif self._legacy is not None:
            self._legacy.add_input(txid, vout, sequence)
        self._inputs_seen = i + 1
        if self._inputs_seen == self._n_inputs:
            self._state = OUTPUTS if self._state == INPUTS else PASS_OUTPUTS
            if self._n_outputs == 0:
                self._outputs_complete()
        return token

    @_guarded
    def add_output(self, amount, script_pubkey):
        if self._state in (READY, PASS_DONE):
            raise SessionError("count_mismatch", "more outputs than the %d declared" % self._n_outputs)
        if self._state in (INPUTS, PASS_INPUTS):
            raise SessionError("count_mismatch", "output before all %d inputs" % self._n_inputs)
        self._expect(OUTPUTS, PASS_OUTPUTS)
        _uint("amount", amount, MAX_MONEY)
        script_pubkey = _bytes("script_pubkey", script_pubkey)
        j = self._outputs_seen
        token = self._token(self._output_record(j, amount, script_pubkey), self._running)
        if self._state == OUTPUTS:
            self._digests.add_output(amount, script_pubkey)
        elif self._legacy is not None:
            self._legacy.add_output(amount, script_pubkey)
        self._outputs_seen = j + 1
        if self._outputs_seen == self._n_outputs:
            self._outputs_complete()
        return token

    def _outputs_complete(self):
        digest = self._running.digest()
        self._running = None
        if self._state == OUTPUTS:
            self._digests.finish()
            self._tx_digest = digest
            self._state = READY
        else:
            if not _same(digest, self._tx_digest):
                raise SessionError("tx_changed", TX_CHANGED)
            self._state = PASS_DONE

    # --- checks shared by the sign requests ----------------------------------

    def _declared(self, algorithm):
        if algorithm not in self._algorithms:
            raise SessionError("not_declared", "%s signing was not declared in begin" % algorithm)

    def _check_index(self, input_index):
        _uint("input_index", input_index, _M32)
        if input_index >= self._n_inputs:
            raise SessionError("bad_value", "input index %d out of range" % input_index)

    def _check_key_index(self, key_index):
        _uint("key_index", key_index, _M32)
        if key_index >= self._n_keys:
            raise SessionError("bad_key", "no key with index %d" % key_index)

    def _check_ecdsa_hash_type(self, hash_type, input_index, allow_single_without_output):
        _uint("hash_type", hash_type, 0xFF)
        if hash_type not in ECDSA_HASH_TYPES:
            raise SessionError("bad_value", "unsupported sighash type 0x%02x" % hash_type)
        if (hash_type & 0x1F) == SIGHASH_SINGLE and input_index >= self._n_outputs \
                and not allow_single_without_output:
            raise SessionError("single_without_output",
                               "SIGHASH_SINGLE for input %d has no matching output" % input_index)

    def _check_pays_to_key(self, script_code, key_index):
        expected = _p2pkh_hash(script_code)
        if expected is None:
            return
        o = 20 * key_index
        if not self._pubkey_hashed[key_index]:
            secret = self._secret(key_index)
            try:
                pub = ec.pubkey_from_secret(secret, bool(self._compressed[key_index]))
            finally:
                _wipe_bytes(secret)
            self._pubkey_hashes[o:o + 20] = hash160(pub)
            self._pubkey_hashed[key_index] = 1
        if not _same(self._pubkey_hashes[o:o + 20], expected):
            raise SessionError("wrong_key", "the script code does not pay to key %d" % key_index)

    def _checked_txin(self, input_index, txin, token):
        if not isinstance(txin, (list, tuple)) or len(txin) != 5:
            raise SessionError("bad_value", "txin must be (txid, vout, sequence, amount, script_pubkey)")
        txid, vout, sequence, amount, script_pubkey = txin
        txid = _bytes("txid", txid, 32)
        script_pubkey = _bytes("script_pubkey", script_pubkey)
        for name, value, maximum in (("vout", vout, _M32), ("sequence", sequence, _M32),
                                     ("amount", amount, MAX_MONEY)):
            _uint(name, value, maximum)
        record = self._input_record(input_index, txid, vout, sequence, amount, script_pubkey)
        if token is None or not _same(self._token(record), _bytes("txin_token", token, TOKEN_SIZE)):
            raise SessionError("tx_changed", TX_CHANGED)
        return txid, vout, sequence, amount, script_pubkey

    @_guarded
    def check_txin(self, input_index, txin, token):
        """The input as streamed (txid, vout, sequence, amount, script_pubkey), or
        tx_changed: for a caller that decides from its script before signing."""
        self._expect(READY)
        self._check_index(input_index)
        return self._checked_txin(input_index, txin, token)

    def forget_keys(self):
        """Wipe the session's keys, keeping the transaction (a caller that adds
        one key per signature needs one slot)."""
        _wipe_bytes(self._keys)
        for i in range(self._max_keys):
            self._compressed[i] = 0
            self._pubkey_hashed[i] = 0
        self._n_keys = 0
        ec.clear_key_cache()

    def _checked_txout(self, index, txout, token):
        if not isinstance(txout, (list, tuple)) or len(txout) != 2:
            raise SessionError("bad_value", "txout must be (amount, script_pubkey)")
        amount = _uint("amount", txout[0], MAX_MONEY)
        script_pubkey = _bytes("script_pubkey", txout[1])
        record = self._output_record(index, amount, script_pubkey)
        if token is None or not _same(self._token(record), _bytes("txout_token", token, TOKEN_SIZE)):
            raise SessionError("tx_changed", TX_CHANGED)
        return amount, script_pubkey

    def _single_output(self, hash_type, input_index, txout, token):
        if (hash_type & 0x1F) != SIGHASH_SINGLE or input_index >= self._n_outputs:
            return None
        if txout is None:
            raise SessionError("bad_value", "SIGHASH_SINGLE needs output %d and its token" % input_index)
        return self._checked_txout(input_index, txout, token)

    def _secret(self, key_index):
        """A short-lived copy of one secret; the caller zeroes it after use."""
        return self._keys[32 * key_index:32 * key_index + 32]

    def _ecdsa_sign(self, key_index, digest, hash_type):
        from quillfw.crypto import ecdsa
        secret = self._secret(key_index)
        try:
            der = ecdsa.sign(secret, digest)
        finally:
            _wipe_bytes(secret)
        return der + bytes((hash_type,))

    # --- segwit v0 (BIP143) -------------------------------------------------

    @_guarded
    def sign_segwit_v0(self, input_index, txin, txin_token, script_code, hash_type, key_index,
                       txout=None, txout_token=None, allow_single_without_output=False):
        self._expect(READY)
        self._declared("segwit_v0")
        self._check_index(input_index)
        self._check_key_index(key_index)
        if not self._compressed[key_index]:
            # As Core's CreateSig: uncompressed keys make non-standard witness spends.
            raise SessionError("bad_key", "segwit v0 signing needs a compressed key")
        self._check_ecdsa_hash_type(hash_type, input_index, allow_single_without_output)
        script_code = _bytes("script_code", script_code)
        txid, vout, sequence, amount, _ = self._checked_txin(input_index, txin, txin_token)
        single = self._single_output(hash_type, input_index, txout, txout_token)
        self._check_pays_to_key(script_code, key_index)
        from quillfw.sighash import segwit_v0 as sighash_segwit_v0
        digest = sighash_segwit_v0.sighash(self._digests, input_index, txid, vout, sequence,
                                           script_code, amount, hash_type, single)
        return self._ecdsa_sign(key_index, digest, hash_type)

    # --- taproot (BIP341/BIP342) --------------------------------------------

    @_guarded
    def sign_taproot(self, input_index, hash_type, key_index, merkle_root=None, tweak=True,
                     leaf_hash=None, codesep_pos=0xFFFFFFFF, annex=None, aux=None,
                     txin=None, txin_token=None, txout=None, txout_token=None):
        self._expect(READY)
        self._declared("taproot")
        self._check_index(input_index)
        self._check_key_index(key_index)
        _uint("hash_type", hash_type, 0xFF)
        from quillfw.crypto import schnorr
        from quillfw.sighash import taproot as sighash_taproot
        if hash_type not in sighash_taproot.VALID_HASH_TYPES:
            raise SessionError("bad_value", "invalid taproot sighash type 0x%02x" % hash_type)
        if (hash_type & 3) == SIGHASH_SINGLE and input_index >= self._n_outputs:
            raise SessionError("single_without_output",
                               "SIGHASH_SINGLE for input %d has no matching output" % input_index)
        if merkle_root is not None:
            merkle_root = _bytes("merkle_root", merkle_root, 32)
        if leaf_hash is not None:
            leaf_hash = _bytes("leaf_hash", leaf_hash, 32)
        _uint("codesep_pos", codesep_pos, _M32)
        if annex is not None:
            annex = _bytes("annex", annex)
        aux = bytes(32) if aux is None else _bytes("aux", aux, 32)
        spent = None
        if hash_type & 0x80:
            if txin is None:
                raise SessionError("bad_value", "ANYONECANPAY needs the input and its token")
            spent = self._checked_txin(input_index, txin, txin_token)
        single = self._single_output(hash_type, input_index, txout, txout_token)
        digest = sighash_taproot.sighash(self._digests, input_index, hash_type, spent, annex,
                                         single, leaf_hash, 0, codesep_pos)
        secret = self._secret(key_index)
        try:
            if leaf_hash is None and tweak:
                tweaked = bytearray(schnorr.taproot_tweak_secret(secret, merkle_root))
                _wipe_bytes(secret)
                secret = tweaked
            sig = schnorr.sign(secret, digest, aux)
        finally:
            _wipe_bytes(secret)
        return sig if hash_type == 0 else sig + bytes((hash_type,))

    # --- legacy: a second streamed pass per input ----------------------------

    @_guarded
    def begin_legacy_pass(self, input_index, script_code, hash_type, key_index,
                          allow_single_without_output=False):
        self._expect(READY)
        self._declared("legacy")
        self._check_index(input_index)
        self._check_key_index(key_index)
        self._check_ecdsa_hash_type(hash_type, input_index, allow_single_without_output)
        # kept for the pass's later requests: copied out of this request's frame
        script_code = bytes(_bytes("script_code", script_code))
        self._check_pays_to_key(script_code, key_index)
        from quillfw.sighash.legacy import LegacyHasher
        self._legacy = LegacyHasher(self._digests.nVersion, self._n_inputs, self._n_outputs,
                                    self._digests.nLockTime, input_index, script_code, hash_type)
        self._legacy_request = (key_index, hash_type)
        self._start_pass(PASS_INPUTS)

    @_guarded
    def finish_legacy_pass(self):
        self._expect(PASS_DONE)
        key_index, hash_type = self._legacy_request
        digest = self._legacy.digest()
        self._legacy = None
        self._state = READY
        return self._ecdsa_sign(key_index, digest, hash_type)

    # --- the end --------------------------------------------------------------

    @_guarded
    def end(self):
        self._expect(READY)
        self._wipe()

    def abort(self):
        self._wipe()
