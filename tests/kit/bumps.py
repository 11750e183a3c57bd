"""psbtbumpfee answers made comparable: Core picks some things at random that Quill does not."""
from __future__ import annotations

from typing import Any


def normalized_bump(core: Any, answer_: Any, tip: int) -> Any:
    """A psbtbumpfee answer with what Core picks at random made canonical: the change position
    (outputs sorted) and a locktime up to 100 blocks back (one time in ten)."""
    if answer_[0] != "ok":
        return answer_
    decoded = core.rpc("decodepsbt", answer_[1]["psbt"])
    holder, key = (decoded["tx"], "locktime") if "tx" in decoded else (decoded, "fallback_locktime")
    assert tip - 99 <= holder[key] <= tip
    holder[key] = tip
    if "tx" in decoded:
        for field in ("txid", "hash"):
            decoded["tx"].pop(field)
        pairs = sorted(zip(decoded["tx"]["vout"], decoded["outputs"], strict=True),
                       key=lambda pair: pair[0]["scriptPubKey"]["hex"])
        decoded["tx"]["vout"] = [dict(out, n=None) for out, _ in pairs]
        decoded["outputs"] = [fields for _, fields in pairs]
    else:
        decoded["outputs"].sort(key=lambda o: o["script"]["hex"])
    return answer_[1]["origfee"], answer_[1]["fee"], answer_[1]["errors"], decoded
