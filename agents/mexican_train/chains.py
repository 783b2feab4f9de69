"""Longest chain a hand can lay on one train: the planning core of the ``planner`` agent.

A hand is a multigraph on pip values: tile ``(a, b)`` is an edge ``a - b``, a double
``(v, v)`` a loop at ``v``. A chain laid on a train whose open end is ``v`` is a trail
(no tile twice) starting at ``v`` (R7). :class:`ChainSolver` finds a longest trail by an
exact depth-first search, memoized on ``(open end, tiles left)``, with three cuts:

* a double at the current end is laid at once (a loop never moves the end, so laying it
  on the first visit is never worse, and it adds a tile);
* parity bound: a trail's tiles have even degree at every pip except its two ends, so at
  least ``(odd pips - 2) / 2`` tiles (``odd / 2`` when the start pip is even) stay out.
  A branch whose bound cannot beat the best chain so far is skipped, and a node stops
  as soon as one of its chains reaches the bound (the tile count is still exact);
* ``node_limit``: after that many expanded states a search keeps the best chain found so
  far (anytime). The default is well above what the hands of the R4 tables (at most 15
  tiles with double-12) need; it bounds the rare searches over big hands (grown by draws
  late in a round), which can expand far more states.

"Longest" is the most tiles. Among chains of that length the search prefers more pips
(the value a chain sheds safely) but, because of the bound cut, does not guarantee the
maximum; results are deterministic (children in increasing tile-id order).
"""

from __future__ import annotations

from mtrain_env.tilegame.tiles import TileSet, bits_list

#: expanded search states after which a search keeps its best chain so far
NODE_LIMIT = 10_000

Result = tuple[int, int, tuple[int, ...]]  # (tiles, pips, chain)


class ChainSolver:
    """Longest-chain search over one set, with a memo kept across calls.

    Args:
        tiles: the set's tables.
        blank_penalty: weigh tiles by the ``blank_penalty`` values (pip tie-break).
        node_limit: states expanded at most per call (see the module docstring).
        memo_size: the memo is cleared when it holds more entries than this.
    """

    def __init__(
        self,
        tiles: TileSet,
        blank_penalty: bool = False,
        node_limit: int = NODE_LIMIT,
        memo_size: int = 200_000,
    ) -> None:
        self.tiles = tiles
        self.values = tuple(tiles.tile_value(i, blank_penalty) for i in range(tiles.num_tiles))
        self.width = tiles.max_pips + 1
        self.node_limit = node_limit
        self.memo_size = memo_size
        self.memo: dict[tuple[int, int], Result] = {}  #: exact results of sub-searches
        self.approx: dict[tuple[int, int], Result] = {}  #: results of searches cut at the limit
        self.nodes = 0  #: states expanded by the last call
        self.exact = True  #: whether the last call finished within ``node_limit``
        self._flip = tuple(0 if a == b else (1 << a) | (1 << b) for a, b in tiles.tiles)
        self._double = tuple(tiles.double_id(v) for v in range(tiles.max_pips + 1))

    def longest(self, end: int, hand: int) -> tuple[int, ...]:
        """A longest chain (tile ids in laying order) ``hand`` can lay from open end ``end``."""
        return self.solve(end, hand)[2]

    def length(self, end: int, hand: int) -> int:
        """The number of tiles of :meth:`longest`."""
        return self.solve(end, hand)[0]

    def solve(self, end: int, hand: int) -> Result:
        """``(tiles, pips, chain)`` of a longest chain from ``end`` over ``hand``."""
        if len(self.memo) > self.memo_size:
            self.memo.clear()
            self.approx.clear()
        self.nodes = 0
        hit = self.approx.get((end, hand))
        if hit is not None:
            self.exact = False
            return hit
        odd = 0
        for t in bits_list(hand):
            odd ^= self._flip[t]
        result = self._best(end, hand, odd)
        self.exact = self.nodes <= self.node_limit
        if not self.exact:
            self.approx[(end, hand)] = result  # asked again, the same answer at no cost
        return result

    @staticmethod
    def _bound(end: int, hand: int, odd: int) -> int:
        """Upper bound on the tiles of a trail from ``end`` (parity of the pip degrees)."""
        k = odd.bit_count()
        return hand.bit_count() - ((k - 2) // 2 if odd >> end & 1 else k // 2)

    def _best(self, end: int, hand: int, odd: int) -> Result:
        key = (end, hand)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        prefix: tuple[int, ...] = ()
        prefix_pips = 0
        double = self._double[end]
        if hand >> double & 1:  # a loop at the end: always lay it now
            hand ^= 1 << double
            prefix = (double,)
            prefix_pips = self.values[double]
        best: Result = (0, 0, ())
        self.nodes += 1
        if self.nodes <= self.node_limit:
            bound = self._bound(end, hand, odd)
            other = self.tiles.other_end
            width = self.width
            values = self.values
            flip = self._flip
            for t in bits_list(hand & self.tiles.match[end]):
                new_end = other[t * width + end]
                new_hand = hand ^ (1 << t)
                new_odd = odd ^ flip[t]
                if best[0] and 1 + self._bound(new_end, new_hand, new_odd) < best[0]:
                    continue  # cannot reach the best length: prune
                sub = self._best(new_end, new_hand, new_odd)
                count = sub[0] + 1
                pips = sub[1] + values[t]
                if count > best[0] or (count == best[0] and pips > best[1]):
                    best = (count, pips, (t, *sub[2]))
                    if count >= bound:
                        break
        result = (best[0] + len(prefix), best[1] + prefix_pips, prefix + best[2])
        if self.nodes <= self.node_limit:  # only exact results are remembered
            self.memo[key] = result
        return result


def chain_ends(tiles: TileSet, end: int, chain: tuple[int, ...]) -> list[int]:
    """The open end after each tile of ``chain`` laid from ``end`` (``ValueError`` on a mismatch, R7)."""
    out = []
    width = tiles.max_pips + 1
    for t in chain:
        end = tiles.other_end[t * width + end]
        if end < 0:
            raise ValueError(f"R7: tile {tiles.tiles[t]} does not match the open end")
        out.append(end)
    return out
