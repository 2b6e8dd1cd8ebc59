"""Locality-sensitive hashing of MinHash signatures: bands × rows, the S-curve, one key per band.

A signature of `bands * rows` values is cut into `bands` runs of `rows` values; two documents become a
candidate pair when all values of at least one band agree, which happens with probability
P(J) = 1 - (1 - J^rows)^bands for Jaccard similarity J: an S-shaped curve whose steep part sits near
(1/bands)^(1/rows). Further band sets cut the same values in other orders (`band_positions`): more
chances per pair from one signature, with a steeper curve. Bands and rows are chosen as datasketch chooses them, so `MinHashLSH(threshold,
num_perm)` and the file-based stage bucket documents alike.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np

from selene import charts
from selene.hashing import GOLDEN, fmix64
from selene.io import fs

_MASK64 = (1 << 64) - 1


@functools.cache
def choose_bands_rows(threshold: float, num_perm: int, false_positive_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) that `datasketch.MinHashLSH(threshold, num_perm, weights=(w, 1 - w))` picks.

    Like datasketch, minimises w·(false-positive area) + (1 - w)·(false-negative area) over all
    b·r <= num_perm (see `areas`), first minimum in (b, r) order; the areas come from Gauss-Legendre
    quadrature, exact for these polynomials, instead of scipy's adaptive quad, so a command does not pay
    ~0.7 s to import scipy (tests check the choice equals datasketch's). MinHashLSH refuses bands < 2;
    this function returns whatever the optimum is.
    """
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    if not 0.0 <= false_positive_weight <= 1.0:
        raise ValueError(f"false_positive_weight must be in [0, 1], got {false_positive_weight}")
    pairs = np.array(
        [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)], dtype=np.float64
    )
    fp, fn = areas(threshold, pairs[:, 0], pairs[:, 1], num_perm)
    error = fp * false_positive_weight + fn * (1.0 - false_positive_weight)
    bands, rows = pairs[int(np.argmin(error))]  # argmin: the first of equal minima, as datasketch's loop
    return int(bands), int(rows)


def areas(
    threshold: float, bands: np.ndarray, rows: np.ndarray, max_degree: int
) -> tuple[np.ndarray, np.ndarray]:
    """(∫_0^t P(J) dJ, ∫_t^1 (1 - P(J)) dJ) for each (bands, rows), P the S-curve: the false-positive
    and false-negative areas. P is a polynomial of degree bands·rows <= `max_degree`, so Gauss-Legendre
    with max_degree/2 + 1 nodes integrates it exactly (to rounding)."""
    x, w = np.polynomial.legendre.leggauss(max_degree // 2 + 1)
    lo = (x + 1.0) * (threshold / 2.0)  # nodes mapped to [0, t] and [t, 1]
    hi = threshold + (x + 1.0) * ((1.0 - threshold) / 2.0)
    b, r = np.asarray(bands, dtype=np.float64)[:, None], np.asarray(rows, dtype=np.float64)[:, None]
    fp = (1.0 - (1.0 - lo**r) ** b) @ w * (threshold / 2.0)
    fn = ((1.0 - hi**r) ** b) @ w * ((1.0 - threshold) / 2.0)
    return fp, fn


CURVE_TRIALS = 20_000  # simulated pairs per S-curve with band_sets > 1


def candidate_probability(
    jaccard: float | np.ndarray, bands: int, rows: int, sets: int = 1
) -> float | np.ndarray:
    """P(two documents share at least one band | their Jaccard similarity).

    One set of bands: 1 - (1 - J^r)^b. More sets cut from the same values (`band_positions`) are not
    independent of each other, so their curve is simulated (`_first_candidate`)."""
    if sets == 1:
        return 1.0 - (1.0 - np.power(jaccard, rows)) ** bands
    t = _first_candidate(bands, rows, sets)
    p = np.searchsorted(t, np.asarray(jaccard, dtype=np.float64), side="left") / t.size
    return float(p) if np.ndim(p) == 0 else p


@functools.cache
def _first_candidate(bands: int, rows: int, sets: int) -> np.ndarray:
    """For CURVE_TRIALS simulated pairs, sorted: the Jaccard from which the pair is a candidate.

    Each signature value of a pair agrees with probability J, independently (MinHash): draw u_i
    uniform per value, value i agrees iff u_i < J. A band agrees iff the largest u of its values is
    below J, so the pair is a candidate iff J exceeds T = min over bands of (max u in the band), and
    P(candidate | J) = P(T < J). Seeded (numpy's frozen RandomState), so manifests are reproducible;
    standard error <= 0.0036."""
    pos = band_positions(bands, rows, sets)
    u = np.random.RandomState(0).random_sample((CURVE_TRIALS, bands * rows)).astype(np.float32)
    return np.sort(u[:, pos].max(axis=2).min(axis=1).astype(np.float64))


def s_curve(bands: int, rows: int, points: int = 101, sets: int = 1) -> list[tuple[float, float]]:
    """The S-curve at `points` evenly spaced Jaccard values in [0, 1]: [(J, P(candidate | J)), ...]."""
    js = np.linspace(0.0, 1.0, points)
    ps = np.asarray(candidate_probability(js, bands, rows, sets))
    return [(float(j), float(p)) for j, p in zip(js, ps, strict=True)]


def curve_summary(bands: int, rows: int, threshold: float, sets: int = 1) -> dict[str, float]:
    """Summary of the banding for the manifest.

    `false_positive_area` = ∫_0^t P(J) dJ and `false_negative_area` = ∫_t^1 (1 - P(J)) dJ are the two
    integrals datasketch weighs to choose bands and rows (`areas`); `p_at_threshold` is P(t);
    `steepest_jaccard` ≈ (1/b)^(1/r), where one set's curve is steepest. With several band sets the
    areas come from the simulated pairs: ∫_0^t P(T < J) dJ = E[(t - T)+], ∫_t^1 P(T >= J) dJ = E[(T - t)+].
    """
    if sets == 1:
        fp, fn = (float(x[0]) for x in areas(threshold, np.array([bands]), np.array([rows]), bands * rows))
    else:
        t = _first_candidate(bands, rows, sets)
        fp, fn = float(np.maximum(threshold - t, 0.0).mean()), float(np.maximum(t - threshold, 0.0).mean())
    return {
        "false_positive_area": fp,
        "false_negative_area": fn,
        "p_at_threshold": float(candidate_probability(threshold, bands, rows, sets)),
        "steepest_jaccard": float((1.0 / bands) ** (1.0 / rows)),
    }


def band_positions(bands: int, rows: int, sets: int = 1) -> np.ndarray:
    """Which signature values make each band: (sets * bands, rows) indices into a signature.

    Set 0 is the usual cut, band j = values [j*rows, (j+1)*rows). Set p > 0 cuts the same
    bands * rows values along diagonals of the (bands × rows) grid of set 0: its band j takes row k of
    set-0 band (j + p*k) mod bands. Every value is used once per set, the rows of a band come from
    different set-0 bands (when rows <= bands), and a band of set p shares at most one value with a
    band of set 0 (or of set q, when q - p is prime to bands): a pair of documents that agrees on most
    values but misses every set-0 band gets new, nearly independent chances from the same signature.
    """
    j = np.arange(bands)[:, None]
    k = np.arange(rows)[None, :]
    return np.concatenate([((j + p * k) % bands) * rows + k for p in range(sets)]).astype(np.int64)


def band_keys(sigs: np.ndarray, bands: int, rows: int, sets: int = 1) -> np.ndarray:
    """One 64-bit key per band of each signature: (n, sets * bands) uint64.

    Band i (of `band_positions`) of a signature is a hash of its values seeded with i, so equal band
    values give equal keys within a band and (almost surely) different keys in different bands: keys
    of all bands can share one bucket table. Keys of different band contents collide with probability
    ~2^-64 per pair. Vectorised over documents and bands; loops over rows. Set 0's keys do not depend
    on `sets`.
    """
    sigs = np.asarray(sigs)
    if sigs.ndim != 2:
        raise ValueError(f"signatures must be a 2-D array (documents × num_perm), got shape {sigs.shape}")
    if bands < 1 or rows < 1 or bands * rows > sigs.shape[1]:
        raise ValueError(f"bands × rows = {bands} × {rows} must be >= 1 and <= num_perm = {sigs.shape[1]}")
    pos = band_positions(bands, rows, sets)
    values = sigs[:, pos].astype(np.uint64)  # (n, sets * bands, rows)
    seeds = np.array([((i + 1) * int(GOLDEN)) & _MASK64 for i in range(len(pos))], dtype=np.uint64)
    h = np.repeat(fmix64(seeds)[None, :], len(sigs), axis=0)
    for k in range(rows):
        h ^= values[:, :, k]
        h *= GOLDEN
        h = (h << np.uint64(31)) | (h >> np.uint64(33))
    return fmix64(h)


def plot_s_curve(bands: int, rows: int, threshold: float, path: str, sets: int = 1) -> str:
    """Draw the S-curve with the threshold marked; returns the path written (local or fsspec URL).

    A `.svg` path gets an SVG written by hand. Any other path gets a PNG through matplotlib when it is
    installed; otherwise (matplotlib is not a dependency of selene) the SVG, at `path` with its suffix
    replaced by `.svg`.
    """
    title = f"b={bands} r={rows}{f' x{sets} sets' if sets > 1 else ''}, threshold {threshold:g}"
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".svg") or importlib.util.find_spec("matplotlib") is None:
        svg_path = (
            path if name.endswith(".svg") else path[: len(path) - len(name)] + name.rsplit(".", 1)[0] + ".svg"
        )
        fs.atomic_write(svg_path, charts.s_curve(s_curve(bands, rows, sets=sets), threshold, title))
        return svg_path
    import matplotlib  # pragma: no cover - not installed where the tests run

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    js, ps = zip(*s_curve(bands, rows, sets=sets), strict=True)
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    ax.plot(js, ps)
    ax.axvline(threshold, color="red", linestyle="--")
    ax.set(xlabel="Jaccard similarity", ylabel="P(candidate)", title=title)
    with fs.atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", bbox_inches="tight")
    plt.close(fig)
    return path
