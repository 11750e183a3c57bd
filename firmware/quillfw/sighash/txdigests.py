"""The per-transaction digests that BIP143 and BIP341 sign, built from a stream.

BIP341 names them sha_prevouts, sha_amounts, sha_scriptpubkeys, sha_sequences
and sha_outputs: single SHA-256 over all outpoints, spent amounts, spent
scriptPubKeys (each with its compact-size length), nSequences and outputs.
BIP143's hashPrevouts, hashSequence and hashOutputs are the double SHA-256 of
the same bytes, i.e. SHA-256 of these values (Core's PrecomputedTransactionData
does the same), so one streamed pass serves both algorithms.

API:
    d = TxDigests(version, locktime, spent_outputs=True)
    d.add_input(txid, vout, sequence, amount=None, script_pubkey=None)  in order
    d.add_output(amount, script_pubkey)                                 in order
    d.finish()        after the last output; then the attributes below are set
    d.nVersion, d.nLockTime, d.n_inputs, d.n_outputs
    d.sha_prevouts, d.sha_sequences, d.sha_outputs            32 bytes each
    d.sha_amounts, d.sha_scriptpubkeys    32 bytes, or None if spent_outputs=False
    TxDigests.from_tx(version, inputs, outputs, locktime, spent_outputs=None)
        whole-transaction form: inputs [(txid, vout, sequence)], outputs
        [(amount, script_pubkey)], spent_outputs [(amount, script_pubkey)] or None
State is five running SHA-256 objects and two counters: O(1) in the size of the
transaction. Inputs may not follow outputs.
"""
import hashlib

from quillfw.sighash.txstream import compact_size, hash_txout, i64le, outpoint, u32le


class TxDigests:
    def __init__(self, version, locktime, spent_outputs=True):
        self.nVersion = version
        self.nLockTime = locktime
        self.n_inputs = 0
        self.n_outputs = 0
        self._prevouts = hashlib.sha256()
        self._sequences = hashlib.sha256()
        self._outputs = hashlib.sha256()
        self._amounts = hashlib.sha256() if spent_outputs else None
        self._scriptpubkeys = hashlib.sha256() if spent_outputs else None
        self._finished = False
        self.sha_prevouts = self.sha_sequences = self.sha_outputs = None
        self.sha_amounts = self.sha_scriptpubkeys = None

    def add_input(self, txid, vout, sequence, amount=None, script_pubkey=None):
        if self._finished or self.n_outputs:
            raise ValueError("input after the outputs")
        self._prevouts.update(outpoint(txid, vout))
        self._sequences.update(u32le(sequence))
        if self._amounts is not None:
            if amount is None or script_pubkey is None:
                raise ValueError("the spent output's amount and scriptPubKey are needed")
            self._amounts.update(i64le(amount))
            self._scriptpubkeys.update(compact_size(len(script_pubkey)))
            self._scriptpubkeys.update(script_pubkey)
        self.n_inputs += 1

    def add_output(self, amount, script_pubkey):
        if self._finished:
            raise ValueError("output after finish")
        hash_txout(self._outputs, amount, script_pubkey)
        self.n_outputs += 1

    def finish(self):
        if self._finished:
            raise ValueError("digests already finished")
        self._finished = True
        self.sha_prevouts = self._prevouts.digest()
        self.sha_sequences = self._sequences.digest()
        self.sha_outputs = self._outputs.digest()
        if self._amounts is not None:
            self.sha_amounts = self._amounts.digest()
            self.sha_scriptpubkeys = self._scriptpubkeys.digest()
        self._prevouts = self._sequences = self._outputs = None
        self._amounts = self._scriptpubkeys = None
        return self

    def check_finished(self):
        if not self._finished:
            raise ValueError("transaction digests are not finished")

    @classmethod
    def from_tx(cls, version, inputs, outputs, locktime, spent_outputs=None):
        if spent_outputs is not None and len(spent_outputs) != len(inputs):
            raise ValueError("one spent output per input is needed")
        d = cls(version, locktime, spent_outputs is not None)
        for i, (txid, vout, sequence) in enumerate(inputs):
            if spent_outputs is None:
                d.add_input(txid, vout, sequence)
            else:
                amount, spk = spent_outputs[i]
                d.add_input(txid, vout, sequence, amount, spk)
        for amount, spk in outputs:
            d.add_output(amount, spk)
        return d.finish()
