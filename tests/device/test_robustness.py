"""Jade-style robustness suite against quill-emu through pyserial: every bad
input gets an error reply accounting for the bytes dropped, and the next good
message is answered."""
import random
import time

import cbor2

from quillfw.wire.framing import MAGIC, OVERHEAD, encode_frame
from tests.device.rawlink import IDLE_MS, discarded, frame

PING = {"id": "ok", "method": "ping"}


def test_garbage_before_a_frame(raw):
    garbage = b"\x00boot: rst:0x1 (POWERON)\r\n\xff\xfe"
    raw.write(garbage + frame(PING))
    rejections, reply = raw.until("ok")
    assert reply["result"] == "idle"
    assert discarded(rejections) == len(garbage)


def test_seeded_random_noise_then_a_good_message(raw):
    rng = random.Random(286)
    noise = bytes(rng.getrandbits(8) for _ in range(1024)).replace(MAGIC, b"..")
    raw.write(noise)
    time.sleep(raw.stale_s)
    rejections, reply = raw.ping()
    assert reply["result"] == "idle" and discarded(rejections) == len(noise)


def test_truncated_frame_is_dropped_when_stale(raw):
    whole = frame({"id": "t", "method": "get_info"})
    raw.write(whole[:-3])
    time.sleep(raw.stale_s)
    rejections, reply = raw.ping()
    assert reply["result"] == "idle"
    assert discarded(rejections) == len(whole) - 3
    assert "Partial frame timed out" in rejections[0]["error"]["message"]


def test_frame_split_across_many_writes(raw):
    whole = frame({"id": "split", "method": "get_info"})
    for i in range(0, len(whole), 3):
        raw.write(whole[i:i + 3], pause=0.002)
    rejections, reply = raw.until("split")
    assert rejections == [] and reply["result"]["protocol_version"] == 1


def test_split_with_pauses_shorter_than_the_idle_timeout(raw):
    whole = frame({"id": "slow", "method": "ping"})
    for part in (whole[:4], whole[4:11], whole[11:]):
        raw.write(part, pause=IDLE_MS / 1000 / 3)
    rejections, reply = raw.until("slow")
    assert rejections == [] and reply["result"] == "idle"


def test_two_frames_in_one_write(raw):
    raw.write(frame({"id": "a", "method": "ping"}) + frame({"id": "b", "method": "get_info"}))
    assert raw.next() == {"id": "a", "result": "idle"}
    assert raw.next()["id"] == "b"


def test_two_frames_split_at_a_random_point_with_a_stale_pause(raw):
    both = frame({"id": "c", "method": "ping"}) + frame({"id": "d", "method": "ping"})
    cut = random.Random(7).randrange(1, len(both) // 2)
    raw.write(both[:cut])
    time.sleep(raw.stale_s)
    raw.write(both[cut:])
    time.sleep(raw.stale_s)
    rejections, reply = raw.until("d")
    # the first frame is lost to the timeout, its tail is skipped as garbage
    assert discarded(rejections) == len(both) // 2
    assert reply["result"] == "idle"


def test_oversized_length_is_refused_before_buffering(raw):
    body = cbor2.dumps({"id": "big", "method": "ping", "params": {"x": b"\x00" * 4100}}, canonical=True)
    big = frame({"id": "big", "method": "ping", "params": {"x": b"\x00" * 4100}})
    raw.write(big)
    time.sleep(raw.stale_s)
    rejections, reply = raw.ping()
    assert "exceeds maximum 4096" in rejections[0]["error"]["message"]
    assert rejections[0]["error"]["data"] == 6
    assert discarded(rejections) == len(body) + OVERHEAD
    assert reply["result"] == "idle"


def test_message_of_exactly_the_maximum_size_is_accepted(raw):
    params = {"detail": b""}
    base = len(cbor2.dumps({"id": "max", "method": "debug_raise", "params": params}, canonical=True))
    params["detail"] = b"\x00" * (4096 - base - 2)
    message = {"id": "max", "method": "debug_raise", "params": params}
    assert len(cbor2.dumps(message, canonical=True)) == 4096
    raw.send(message)
    rejections, reply = raw.until("max")
    assert rejections == [] and reply["error"]["message"] == "Internal error (ValueError)"


def test_bad_crc(raw):
    bad = bytearray(frame({"id": "crc", "method": "ping"}))
    bad[8] ^= 0x40
    raw.write(bytes(bad) + frame(PING))
    rejections, reply = raw.until("ok")
    assert [r["error"]["message"] for r in rejections] == ["Frame CRC mismatch"]
    assert discarded(rejections) == len(bad) and reply["result"] == "idle"


def test_bad_magic(raw):
    bad = b"\xc5\x52" + frame({"id": "m", "method": "ping"})[2:]
    raw.write(bad + frame(PING))
    rejections, reply = raw.until("ok")
    assert discarded(rejections) == len(bad) and reply["result"] == "idle"


def test_non_canonical_cbor(raw):
    enc = cbor2.dumps
    cases = [b"\xa2" + enc("method") + enc("ping") + enc("id") + enc("x"),   # unsorted keys
             b"\xbf" + enc("id") + enc("x") + enc("method") + enc("ping") + b"\xff",  # indefinite
             b"\xa2" + enc("id") + b"\x78\x01x" + enc("method") + enc("ping"),  # long length form
             b"\xa2" + enc("id") + enc("x") + enc("method") + enc("ping") + b"\x00"]  # trailing
    for body in cases:
        raw.write(encode_frame(body))
        reply = raw.next()
        assert reply["id"] == "00" and reply["error"]["code"] == -32700, reply
        assert reply["error"]["message"].startswith("Invalid CBOR: ")
    assert raw.ping()[1]["result"] == "idle"


def test_unknown_method(raw):
    raw.send({"id": "u", "method": "sign_tx_legacy"}, valid=False)
    assert raw.next() == {"id": "u", "error": {"code": -32601, "message": "Unknown method"}}


def test_wrong_param_types(raw):
    raw.send({"id": "w1", "method": "debug_sleep", "params": {"ms": "10"}}, valid=False)
    raw.send({"id": "w2", "method": "debug_sleep", "params": {}}, valid=False)
    raw.send({"id": "w3", "method": "ping", "params": {"x": 1}}, valid=None)
    raw.send({"id": "w4", "method": "debug_sleep", "params": {"ms": 5, "awaiting_user": 1}}, valid=False)
    messages = [raw.next()["error"] for _ in range(4)]
    assert [(e["code"], e["message"]) for e in messages] == [
        (-32602, "Parameter 'ms' must be uint"), (-32602, "Missing parameter 'ms'"),
        (-32602, "Unknown parameter 'x'"), (-32602, "Parameter 'awaiting_user' must be bool")]


def test_unreadable_requests_are_answered_with_the_reserved_id(raw):
    for message, valid in (({"method": "ping"}, False), ({"id": 7, "method": "ping"}, False),
                           ({"id": "x" * 17, "method": "ping"}, False), (["id", "ping"], None)):
        raw.send(message, valid)
        reply = raw.next()
        assert reply["id"] == "00" and reply["error"]["code"] == -32600


def test_ctrl_c_and_ctrl_d_bytes_are_data(raw):
    raw.send({"id": "\x03\x04", "method": "ping"})
    assert raw.next() == {"id": "\x03\x04", "result": "idle"}


def test_out_of_memory_is_an_error_reply_and_the_device_keeps_serving(raw):
    raw.send({"id": "oom", "method": "debug_alloc", "params": {"size": 10 ** 6}})
    assert raw.next() == {"id": "oom", "error": {"code": -32005, "message": "Out of memory"}}
    raw.send({"id": "fits", "method": "debug_alloc", "params": {"size": 1000}})
    assert raw.next() == {"id": "fits", "result": 1000}


def test_handler_bug_text_never_reaches_the_host(raw):
    raw.send({"id": "bug", "method": "debug_raise"})
    error = raw.next()["error"]
    assert error == {"code": -32603, "message": "Internal error (ValueError)"}
