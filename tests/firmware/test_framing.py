"""Frames (firmware/quillfw/wire/framing.py): the encoder against the wire vectors,
the reader against the byte-stream vectors (garbage, splits, concatenation,
oversize, bad CRC, idle timeout)."""
from quillfw.wire import framing
from tests.firmware import wire_vectors


def _events(reader, chunks, idle):
    events = []
    for chunk in chunks:
        pos = 0
        while pos < len(chunk):
            pos += reader.feed(memoryview(chunk)[pos:], 0)
            _collect(reader, events)
    if idle and reader.expire(reader.idle_ms + 1):
        _collect(reader, events)
    return events


def _collect(reader, events):
    if reader.event == framing.FRAME:
        events.append({"frame": bytes(reader.body).hex()})
    elif reader.event == framing.REJECT:
        events.append({"reject": reader.reject_count})


def test_frames_match_the_wire_vectors():
    for v in wire_vectors.load("messages.json"):
        body = bytes.fromhex(v["cbor"])
        frame = framing.encode_frame(body)
        assert frame == bytes.fromhex(v["frame"]), v["name"]
        assert len(frame) == len(body) + framing.OVERHEAD


def test_reader_events_match_the_stream_vectors():
    vectors = wire_vectors.load("streams.json")
    assert len(vectors) >= 12
    for v in vectors:
        reader = framing.FrameReader(4096, idle_ms=100)
        chunks = [bytes.fromhex(c) for c in v["chunks"]]
        assert _events(reader, chunks, v["idle"]) == v["events"], v["name"]
        assert not reader.pending(), v["name"]


def test_rejected_byte_counts_add_up_to_everything_that_was_not_a_frame():
    for v in wire_vectors.load("streams.json"):
        sent = sum(len(c) // 2 for c in v["chunks"])
        framed = sum(len(e["frame"]) // 2 + framing.OVERHEAD for e in v["events"] if "frame" in e)
        rejected = sum(e["reject"] for e in v["events"] if "reject" in e)
        assert framed + rejected == sent, v["name"]


def test_partial_frame_kept_until_idle_timeout():
    frame = framing.encode_frame(b"\xa0")
    reader = framing.FrameReader(64, idle_ms=500)
    assert reader.feed(frame[:5], 1000) == 5 and reader.event is None
    assert not reader.expire(1499)
    assert reader.feed(frame[5:], 1400) == len(frame) - 5
    assert reader.event == framing.FRAME and bytes(reader.body) == b"\xa0"


def test_stale_partial_frame_dropped_and_next_frame_read():
    frame = framing.encode_frame(b"\xa0")
    reader = framing.FrameReader(64, idle_ms=500)
    reader.feed(frame[:8], 0)
    assert reader.expire(500)
    assert reader.event == framing.REJECT and reader.reject_count == 8
    reader.feed(frame, 600)
    assert reader.event == framing.FRAME


def test_expire_uses_the_given_tick_difference():
    reader = framing.FrameReader(64, idle_ms=10)
    reader.feed(b"\x01", 0x3FFFFFF0)

    def wrap(a, b):  # ticks_diff
        return ((a - b) + 0x20000000) % 0x40000000 - 0x20000000

    assert reader.expire(0x00000005, wrap)
    assert reader.reject_count == 1


def test_length_above_maximum_refused_without_buffering_the_body():
    reader = framing.FrameReader(16, idle_ms=100)
    frame = framing.encode_frame(b"\x00" * 17)
    consumed = reader.feed(frame, 0)
    assert consumed == framing.HEADER_SIZE
    assert reader.event == framing.REJECT and "exceeds maximum 16" in reader.reject_message
    ok = framing.FrameReader(16, idle_ms=100)
    ok.feed(framing.encode_frame(b"\x00" * 16), 0)
    assert ok.event == framing.FRAME and len(ok.body) == 16
