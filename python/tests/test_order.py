"""order.schedule: seeded, every point once per round, blocks kept together, ABBA."""
from physmem_lab import order
from physmem_lab.suitedef import Point, Variant

M = 1 << 20


def _points(rounds=2):
    return [Point(exp, v, size, {}, rounds=rounds) for exp in ("gups", "chase")
            for size in (M, 4 * M) for v in (Variant("array", "4k"), Variant("array", "1g"),
                                             Variant("tree-index", "4k"), Variant("tree-index", "1g"))]


def _round(slots, n):
    return [s.point for s in sorted((s for s in slots if s.round == n), key=lambda s: s.position)]


def test_every_point_runs_once_in_each_of_its_rounds():
    pts = _points(rounds=3) + [Point("scan", Variant("array", "4k"), M, {}, rounds=1)]
    slots = order.schedule(pts, seed=5)
    for n in range(3):
        got = _round(slots, n)
        assert sorted(map(id, got)) == sorted(id(p) for p in pts if p.rounds > n)
        assert [s.position for s in slots if s.round == n] == list(range(len(got)))


def test_odd_rounds_are_the_reverse_of_the_round_before():
    slots = order.schedule(_points(rounds=4), seed=11)
    assert _round(slots, 1) == _round(slots, 0)[::-1]
    assert _round(slots, 3) == _round(slots, 2)[::-1]
    assert _round(slots, 2) != _round(slots, 0)         # a fresh shuffle, not a repeat


def test_same_seed_same_order_other_seed_other_order():
    a = [s.point.label() for s in order.schedule(_points(), seed=3)]
    b = [s.point.label() for s in order.schedule(_points(), seed=3)]
    c = [s.point.label() for s in order.schedule(_points(), seed=4)]
    assert a == b and a != c


def test_compared_points_stay_together_and_arrays_do_not_always_go_first():
    firsts = set()
    for seed in range(20):
        seq = _round(order.schedule(_points(), seed), 0)
        keys = [order.block_key(p) for p in seq]
        runs = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
        assert len(runs) == len(set(keys))               # each block contiguous
        firsts.add(seq[0].kind)
    assert firsts == {"array", "tree-index"}


def test_position_is_balanced_over_a_pair_of_rounds():
    pts = _points()
    slots = order.schedule(pts, seed=9)
    n = len(pts)
    for p in pts:
        assert sum(s.position for s in slots if s.point is p) == n - 1
