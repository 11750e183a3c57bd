"""Drive one signing session on the device (protocol/SPEC.md §7) for a list of
SignRequests and return their signatures.

    sign_on_device(client, info, tx, spent, requests, hash_type, stats=None)
        -> {request.ident(): signature}

The exchange holds the client's session lock from sign_begin to sign_end:
begin, the keys the requests use (only those), every input with its spent
amount and scriptPubKey, every output (in batches that fit max_message_size),
then one sign request per signature; legacy signatures stream the inputs and
outputs once more. Any failure sends sign_abort (the device also wipes the
session on every error reply) and raises; nothing partial is returned.

The device may ask its user to confirm before the first signature (its
confirmation policy, SPEC.md §8): sign requests wait up to the client's
user_timeout, the client logs "Waiting for confirmation on the device" when
ping says so, and a refusal or a timeout on the device is a DeviceError
(USER_CANCELLED / CONFIRM_TIMEOUT) that aborts the session like any other.

Before starting, the device's get_info must list every method, script type and
sighash type the requests need, and the transaction must fit its limits.
"""
from quill.consensus import SIGHASH_ANYONECANPAY, SIGHASH_SINGLE
from quill.device.codec import OVERHEAD as FRAME_OVERHEAD
from quill.device.codec import canonical_dumps
from quill.device.errors import DeviceError, DeviceRestarted, DeviceUnavailable

from .errors import DeviceCannotSign, DeviceLimitExceeded
from .solver import LEGACY, SEGWIT_V0, TAPROOT, TWEAK_BIP86, ecdsa_hash_type

# Request ids are 4 hex digits of prefix and a hex counter (DeviceClient): ~7 bytes.
_TYPICAL_ID = "x" * 7
# Bytes of a request around its params: {"id": <16>, "method": <32>, "params": {...}}.
_ENVELOPE = 64
# A token in a reply array: a 16-byte byte string with its 1-byte head.
_TOKEN_ITEM = 17
# A batch's request bytes as a share of the free heap sign_begin reports. Measured
# at the 97K emulator heap: ~18 KB free after sign_begin, ~7 KB once the first
# signature has built its tables; 1.5 KB batches then ran out of memory, 750 B do not.
_HEAP_SHARE = 24

METHODS = {LEGACY: ("sign_legacy_begin", "sign_legacy_finish"),
           SEGWIT_V0: ("sign_segwit_v0",), TAPROOT: ("sign_taproot",)}
SESSION_METHODS = ("sign_begin", "sign_add_key", "sign_add_inputs", "sign_add_outputs",
                   "sign_stage", "sign_end", "sign_abort")
# Where a staged script goes in a sign request (SPEC.md §7.3).
_STAGE_PATHS = (("script_code", ("script_code",)), ("txin_script_pubkey", ("txin", 4)),
                ("txout_script_pubkey", ("txout", 1)))


def required_capabilities(requests, script_types, hash_type):
    """(methods, script types, sighash types) the requests need from get_info.
    script_types: the device's name for each input's script type."""
    methods = set(SESSION_METHODS)
    sighashes = set()
    for r in requests:
        methods.update(METHODS[r.algorithm])
        sighashes.add(hash_type if r.algorithm == TAPROOT else ecdsa_hash_type(hash_type))
    return methods, {script_types[r.input_index] for r in requests}, sighashes


def check_device(info, tx, requests, script_types, hash_type, spent=()):
    """DeviceCannotSign / DeviceLimitExceeded unless the device's get_info offers what the
    requests need and every script fits its max_script_size (checked before anything is sent)."""
    methods, types, sighashes = required_capabilities(requests, script_types, hash_type)
    missing = sorted(methods - set(info.get("methods", ())))
    if missing:
        raise DeviceCannotSign(f"Device cannot sign: it lacks the methods {', '.join(missing)}")
    missing = sorted(types - set(info.get("script_types", ())))
    if missing:
        raise DeviceCannotSign(f"Device cannot sign {', '.join(missing)} inputs")
    missing = sorted(sighashes - set(info.get("sighash_types", ())))
    if missing:
        raise DeviceCannotSign("Device cannot sign sighash type "
                               + ", ".join(f"0x{t:02x}" for t in missing))
    limits = info.get("limits", {})
    keys = {r.key.pubkey for r in requests}
    for name, count in (("inputs", len(tx.vin)), ("outputs", len(tx.vout)), ("keys", len(keys))):
        limit = limits.get(f"max_{name}")
        if limit is not None and count > limit:
            raise DeviceLimitExceeded(f"Transaction needs {count} {name}, more than the device's limit of {limit}")
    max_script = limits.get("max_script_size")
    if max_script is not None:
        scripts = [("output", o.script_pubkey) for o in tx.vout]
        scripts += [("input's scriptPubKey", s.script_pubkey) for s in spent if s is not None]
        scripts += [("script code", r.script_code) for r in requests if r.script_code]
        for what, script in scripts:
            if len(script) > max_script:
                raise DeviceLimitExceeded(f"An {what} script of {len(script)} bytes is larger than the "
                                          f"device's limit of {max_script}")


def batch_bytes(max_size, heap_free):
    """How many request bytes one batch of inputs or outputs may take. The device
    decodes a whole message before using it (~3x its size in objects on a 64-bit
    heap, and signing needs more), so batches stay a small part of the heap
    sign_begin reports free."""
    if not heap_free:              # no fixed heap (CPython): the message size decides
        return max_size
    return max(256, min(max_size, heap_free // _HEAP_SHARE))


class _Driver:
    def __init__(self, client, max_size, batch_size=None):
        self.client = client
        self.max_size = max_size
        self.batch_size = batch_size or max_size
        self.bytes_sent = 0
        self.messages = 0
        self.session = None     # sign_begin's session id: every later request names it

    def call(self, method, params=None, awaits_user=False):
        if self.session is not None:
            params = dict(params or {}, session=self.session)
        body = {"id": _TYPICAL_ID, "method": method}
        if params is not None:
            body["params"] = params
        self.bytes_sent += len(canonical_dumps(body)) + FRAME_OVERHEAD
        self.messages += 1
        return self.client.call(method, params, awaits_user=awaits_user)

    def fits(self, method, params):
        if self.session is not None:
            params = dict(params, session=self.session)
        return len(canonical_dumps({"id": "x" * 16, "method": method, "params": params})) <= self.max_size

    def batches(self, items):
        """Runs of items whose request and token reply both fit one message."""
        # the request around the items, its session id included (a flat 64 bytes did not
        # cover it: a batch filled to max_message_size was refused as MessageTooLarge)
        room = self.batch_size - max(_ENVELOPE, len(canonical_dumps(
            {"id": "x" * 16, "method": "sign_add_outputs",
             "params": {"outputs": [], "session": self.session or ""}})) + 4)
        batch, size = [], 0
        for item in items:
            n = len(canonical_dumps(item))
            if batch and (size + n > room or (len(batch) + 1) * _TOKEN_ITEM > room):
                yield batch
                batch, size = [], 0
            batch.append(item)
            size += n
        if batch:
            yield batch

    def stream(self, inputs, outputs):
        tokens_in, tokens_out = [], []
        for batch in self.batches(inputs):
            tokens_in += self.call("sign_add_inputs", {"inputs": batch})
        for batch in self.batches(outputs):
            tokens_out += self.call("sign_add_outputs", {"outputs": batch})
        return tokens_in, tokens_out

    def sign_call(self, method, params):
        """Send a sign request, staging its largest scripts first when it is too big.
        A sign request may wait for the user's confirmation (SPEC.md §8): the long timeout."""
        for name, path in _STAGE_PATHS:
            if self.fits(method, params):
                break
            holder = params.get(path[0])
            if holder is None:
                continue
            if len(path) == 1:
                self.call("sign_stage", {"name": name, "data": params.pop(path[0])})
            else:
                holder = list(holder)
                self.call("sign_stage", {"name": name, "data": holder[path[1]]})
                holder[path[1]] = b""
                params[path[0]] = holder
        return self.call(method, params, awaits_user=True)


def _txin_items(tx, spent):
    items = []
    for txin, out in zip(tx.vin, spent, strict=True):
        # unknown coins: placeholders, never signed (and taproot is then not declared)
        value, script = (0, b"") if out is None else (out.value, out.script_pubkey)
        items.append([txin.prevout.hash, txin.prevout.n, txin.sequence, value, script])
    return items


def sign_on_device(client, info, tx, spent, requests, hash_type, stats=None, network=None):
    """The signatures for `requests`, made in one device session; client: a
    connected DeviceClient, info: its get_info; network: the device's name for
    the chain (quill.device.hwkeys.device_network), the form of the addresses
    its review screen shows (None: left out, the device shows mainnet's)."""
    driver = _Driver(client, info["max_message_size"])
    inputs = _txin_items(tx, spent)
    outputs = [[o.value, o.script_pubkey] for o in tx.vout]
    algorithms = [a for a in (LEGACY, SEGWIT_V0, TAPROOT) if any(r.algorithm == a for r in requests)]
    signatures = {}
    begin = {"version": tx.version, "locktime": tx.locktime, "n_inputs": len(tx.vin),
             "n_outputs": len(tx.vout), "algorithms": algorithms}
    if info.get("boot_id"):
        begin["boot_id"] = info["boot_id"]       # refused if the device restarted since
    if network is not None:
        begin["network"] = network
    with client.session():
        try:
            began = driver.call("sign_begin", begin)
            heap_free = began.get("heap_free") if isinstance(began, dict) else None
            driver.session = began.get("session") if isinstance(began, dict) else None
            driver.batch_size = batch_bytes(driver.max_size, heap_free)
            key_index = {}
            for r in requests:
                if r.key.pubkey not in key_index:
                    key_index[r.key.pubkey] = driver.call(
                        "sign_add_key", {"secret": r.key.secret, "compressed": r.key.compressed})
            tokens_in, tokens_out = driver.stream(inputs, outputs)
            for r in requests:
                signatures[r.ident()] = _sign_one(driver, r, key_index[r.key.pubkey], hash_type,
                                                  inputs, outputs, tokens_in, tokens_out)
            driver.call("sign_end")
        except (DeviceError, DeviceUnavailable) as e:
            signatures = None
            if restarted(client, info):
                raise DeviceRestarted(before_session=driver.session is None) from e
            _abort(driver)
            raise
        except BaseException:
            signatures = None
            _abort(driver)
            raise
        finally:
            if stats is not None:
                stats["bytes_sent"] = stats.get("bytes_sent", 0) + driver.bytes_sent
                stats["messages"] = stats.get("messages", 0) + driver.messages
    return signatures


def _abort(driver):
    try:
        driver.call("sign_abort")
    except (DeviceError, DeviceUnavailable):
        pass  # the device wipes the session on its own error replies and at restart


def restarted(client, info):
    """Whether the firmware started again since `info` was read: its boot_id changed.
    (A device that does not report one is never taken for restarted.)"""
    if not info.get("boot_id"):
        return False
    try:
        return client.get_info().get("boot_id") != info["boot_id"]
    except (DeviceError, DeviceUnavailable):
        return False


def _sign_one(driver, r, key_index, hash_type, inputs, outputs, tokens_in, tokens_out):
    i = r.input_index
    single = (hash_type & 0x1F) == SIGHASH_SINGLE and i < len(outputs)
    if r.algorithm == LEGACY:
        driver.sign_call("sign_legacy_begin", {"input_index": i, "script_code": r.script_code,
                                               "hash_type": ecdsa_hash_type(hash_type),
                                               "key_index": key_index})
        driver.stream(inputs, outputs)
        return driver.call("sign_legacy_finish")
    if r.algorithm == SEGWIT_V0:
        params = {"input_index": i, "txin": list(inputs[i]), "txin_token": tokens_in[i],
                  "script_code": r.script_code, "hash_type": ecdsa_hash_type(hash_type),
                  "key_index": key_index}
        if single:
            params.update(txout=list(outputs[i]), txout_token=tokens_out[i])
        return driver.sign_call("sign_segwit_v0", params)
    params = {"input_index": i, "hash_type": hash_type, "key_index": key_index,
              "tweak": r.tweak == TWEAK_BIP86}
    if hash_type & SIGHASH_ANYONECANPAY:
        params.update(txin=list(inputs[i]), txin_token=tokens_in[i])
    if single:
        params.update(txout=list(outputs[i]), txout_token=tokens_out[i])
    return driver.sign_call("sign_taproot", params)
