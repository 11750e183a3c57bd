"""The polymod of the BCH codes over GF(32) behind bech32 (BIP173/BIP350) and
descriptor checksums (BIP380), computed without a Python loop per symbol.

BIP173 feeds symbols one at a time: `chk = shift(chk) ^ v`, where `shift`
multiplies the residue by x modulo the code's generator. `shift` is linear
over GF(2) (a shift and an XOR of generators), so the result is the XOR of
each symbol's own contribution, shift^k(v) for a symbol followed by k others,
and of shift^n(1) for the initial residue. Those contributions are tabulated
once per position, and a checksum is one C-level `reduce` over the symbols.
"""
from __future__ import annotations

from functools import reduce
from operator import getitem, xor
from typing import Sequence


def xor_table(generators: Sequence[int]) -> tuple[int, ...]:
    """XOR of the generators selected by each 5-bit value (one lookup per step instead of five)."""
    table = []
    for top in range(32):
        x = 0
        for i, g in enumerate(generators):
            if (top >> i) & 1:
                x ^= g
        table.append(x)
    return tuple(table)


class Polymod:
    """BIP173's polymod for a code with `generators` and a `bits`-bit residue
    (30 for bech32, 40 for descriptors). Inputs of up to `positions` symbols
    use the tables; longer ones the symbol-by-symbol loop."""

    def __init__(self, generators: Sequence[int], bits: int, positions: int) -> None:
        self._table = xor_table(generators)
        # the five generators one by one, for step(): compiled, attributes of native integers
        self._g0, self._g1, self._g2, self._g3, self._g4 = generators
        self._top = bits - 5
        self._mask = (1 << self._top) - 1
        self._positions = positions
        self._by_position: list[tuple[int, ...]] | None = None   # made at the first use, not at start-up

    @property
    def positions(self) -> int:
        """The longest input the tables cover."""
        return self._positions

    def tables(self) -> list[tuple[int, ...]]:
        """tables()[k][v]: the residue a symbol v adds when k symbols follow it; tables()[n][1]: the
        initial residue's share after n symbols."""
        return self._by_position or self._tables()

    def _tables(self) -> list[tuple[int, ...]]:
        """_tables()[k][v]: the residue a symbol v adds when k symbols follow it."""
        by_position = [tuple(range(32))]
        for _ in range(self._positions):
            by_position.append(tuple(self._shift(c) for c in by_position[-1]))
        self._by_position = by_position
        return by_position

    def _shift(self, chk: int) -> int:
        return ((chk & self._mask) << 5) ^ self._table[chk >> self._top]

    def __call__(self, values: Sequence[int]) -> int:
        n = len(values)
        by_position = self._by_position or self._tables()
        if not n:
            return 1
        if n >= len(by_position):
            return self.stepwise(values)
        return reduce(xor, map(getitem, by_position[n - 1::-1], values), by_position[n][1])

    def step(self, chk: int, v: int) -> int:
        """One symbol of BIP173's loop: multiply by x, add `v`, and reduce by the generators the
        residue's top 5 bits select. Compiled by mypyc (quill.compiled) this is native integer
        code with no lookup in a table of Python integers: the compiled loops feed symbols here."""
        top = chk >> self._top
        chk = ((chk & self._mask) << 5) ^ v
        if top & 1:
            chk ^= self._g0
        if top & 2:
            chk ^= self._g1
        if top & 4:
            chk ^= self._g2
        if top & 8:
            chk ^= self._g3
        if top & 16:
            chk ^= self._g4
        return chk

    def continued(self, chk: int, values: bytes) -> int:
        """The polymod from residue `chk` on, fed `values` one symbol at a time (step()). Compiled,
        this loop is native integer code, faster than the tables' reduce, whose every step makes a
        Python integer; interpreted, the reduce is the faster."""
        for i in range(len(values)):
            chk = self.step(chk, values[i])
        return chk

    def stepwise(self, values: Sequence[int]) -> int:
        """The polymod as BIP173 writes it, one symbol at a time."""
        chk = 1
        table, top, mask = self._table, self._top, self._mask
        for v in values:
            chk = ((chk & mask) << 5) ^ v ^ table[chk >> top]
        return chk
