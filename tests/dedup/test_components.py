"""Dedup's clustering as steps over files: components against union-find, the summary's quantiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from selene.dedup import clusters, components
from selene.dedup.work import EDGE_DTYPE
from selene.io import fs


def reference(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    parent = np.arange(n)
    components.union(parent, a, b)
    return parent


def graphs(rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """Random graphs, long chains in random order (the deepest case for the star steps), near-chains."""
    for trial in range(30):
        n = int(rng.integers(2, 2000))
        m = int(rng.integers(0, 3000))
        if trial % 3 == 0:
            a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        elif trial % 3 == 1:
            perm = rng.permutation(n)
            a, b = perm[:-1], perm[1:]
        else:
            a = rng.integers(0, n, m)
            b = np.minimum(n - 1, a + rng.integers(1, 5, m))
        keep = a != b
        yield n, np.minimum(a, b)[keep], np.maximum(a, b)[keep]


def test_components_match_union_find_for_any_number_of_parts(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    for t, (n, a, b) in enumerate(graphs(rng)):
        files = []
        pieces = int(rng.integers(1, 6))  # the pairs spread over several edge files, as bands write them
        for f in range(pieces):
            sel = slice(f * a.size // pieces, (f + 1) * a.size // pieces)
            e = np.zeros(a[sel].size, EDGE_DTYPE)
            e["a"], e["b"] = a[sel], b[sel]
            files.append(str(tmp_path / f"t{t}-e{f}.npy"))
            fs.save_npy(files[-1], e)
        want = reference(n, a, b)
        linked = np.unique(np.concatenate([a, b]))
        for parts, span in ((1, 0), (3, 0), (7, 0), (3, n), (7, n)):
            steps: list[str] = []

            def mapper(name, fn, args, steps=steps):  # type: ignore[no-untyped-def]
                steps.append(name)
                return [fn(*x) for x in args]

            root = str(tmp_path / f"t{t}-g{parts}-{span}")
            stars = components.components(mapper, components.Graph(root, parts, span), files)
            got = np.arange(n)
            seen = np.zeros(n, dtype=bool)
            for r, paths in enumerate(stars):
                centre, leaf = components.gather(paths)
                # split by the centre's part (its range with `span`), for the cluster step
                assert np.all((centre * parts // span if span else centre % parts) == r)
                assert not seen[leaf].any()  # every document a leaf at most once
                seen[leaf] = True
                got[leaf] = centre
            assert np.array_equal(got, want), (t, parts, span)
            assert set(np.flatnonzero(seen)) | set(np.flatnonzero(got != np.arange(n))) <= set(
                linked.tolist()
            )
            assert steps[0] == "dedup-links" and steps.count("dedup-large-star") <= 12
            assert [p.name for p in Path(root).iterdir()] in ([], ["stars"])  # step files removed


def test_no_pairs_no_components(tmp_path: Path) -> None:
    fs.save_npy(str(tmp_path / "e.npy"), np.zeros(0, EDGE_DTYPE))
    g = components.Graph(str(tmp_path / "g"), 2)
    assert components.components(
        lambda _, fn, args: [fn(*a) for a in args], g, [str(tmp_path / "e.npy")]
    ) == [
        [],
        [],
    ]


@pytest.mark.parametrize("scale", ["estimates", "exact"])
def test_summary_quantiles_from_group_files_equal_numpys(scale: str) -> None:
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(1, 300))
        j = rng.integers(90, 129, n) / 128 if scale == "estimates" else rng.random(n)
        j[rng.random(n) < 0.1] = 1.0
        groups = [np.sort(p) for p in np.array_split(rng.permutation(j), int(rng.integers(1, 6))) if p.size]
        for q in (0.01, 0.05, 0.5):
            assert clusters._quantile(groups, n, q) == float(np.quantile(j, q))
