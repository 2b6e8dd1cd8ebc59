"""MinHash signatures of shingle-hash sets, value for value those of `datasketch.MinHash`.

datasketch 2.x has three permutation schemes; `MinHash(num_perm, seed)` uses "affine32":

    h   = fmix32(hashfunc(shingle))          # hashfunc gives 32 bits (sha1_hash32 by default)
    sig = min over shingles of (a * h + b) mod 2^32,  a odd, (a, b) drawn from RandomState(seed)

"legacy" (datasketch < 2.0) is `((a * h + b) mod (2^61 - 1)) & (2^32 - 1)` with a * h wrapping in
uint64; "affine64" is affine32 on 64-bit values. Here `hashfunc` is "the low 32 bits of our 64-bit
shingle hash" (all 64 for affine64), so `signature(hashes, perms)` equals
`MinHash(num_perm, seed, scheme=..., hashfunc=lambda h: int(h) & 0xFFFFFFFF)` after
`update_batch(hashes)`, and `to_lean_minhash` loads it into datasketch (MinHashLSH, serialisation).

Signatures are returned as uint64 whatever the scheme (one dtype for the stage's files); for the
32-bit schemes every value fits in 32 bits and `.astype(perms.dtype)` stores them in half the space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from selene.hashing import fmix32, fmix64

if TYPE_CHECKING:
    from datasketch import LeanMinHash

Scheme = Literal["affine32", "affine64", "legacy"]
MERSENNE_PRIME = (1 << 61) - 1  # datasketch's _mersenne_prime (legacy scheme)
MAX_HASH_32 = (1 << 32) - 1  # datasketch's _max_hash: the empty value of the 32-bit schemes
# Values of the (num_perm × shingles) matrix computed at once: 4-8 MB of scratch, reused per chunk
# (measured: 2x faster than 256 K values per chunk, 3x faster than 4 M for uint64).
CHUNK_VALUES = 1 << 20


@dataclass(frozen=True, eq=False)
class Permutations:
    """The num_perm hash permutations of a MinHash: `a`, `b` in the scheme's dtype (uint32 or uint64)."""

    num_perm: int
    seed: int
    scheme: Scheme
    a: np.ndarray
    b: np.ndarray

    @classmethod
    def from_seed(cls, num_perm: int, seed: int, scheme: Scheme = "affine32") -> Permutations:
        """The parameters `datasketch.MinHash(num_perm, seed, scheme=scheme)` draws, in its order."""
        if num_perm < 1:
            raise ValueError(f"num_perm must be >= 1, got {num_perm}")
        gen = np.random.RandomState(seed)
        if scheme == "legacy":
            # One (a, b) pair per permutation, interleaved: the order of the draws is part of the result.
            pairs = [
                (
                    gen.randint(1, MERSENNE_PRIME, dtype=np.uint64),
                    gen.randint(0, MERSENNE_PRIME, dtype=np.uint64),
                )
                for _ in range(num_perm)
            ]
            ab = np.array(pairs, dtype=np.uint64).T
            return cls(num_perm, seed, scheme, ab[0].copy(), ab[1].copy())
        if scheme not in ("affine32", "affine64"):
            raise ValueError(f"scheme must be 'affine32', 'affine64' or 'legacy', got {scheme!r}")
        width = 32 if scheme == "affine32" else 64
        dtype = np.uint32 if width == 32 else np.uint64
        # Odd a: h -> a*h + b mod 2^width is then a bijection, so permuting adds no collisions.
        a = gen.randint(0, 1 << (width - 1), num_perm, dtype=dtype) * dtype(2) + dtype(1)
        b = gen.randint(0, 1 << width, num_perm, dtype=dtype)
        return cls(num_perm, seed, scheme, a, b)

    @property
    def dtype(self) -> np.dtype:
        """datasketch's storage dtype for this scheme (all values of a signature fit in it)."""
        return np.dtype(np.uint32 if self.scheme == "affine32" else np.uint64)

    @property
    def max_value(self) -> int:
        """The value of every position of an empty set's signature (datasketch's initial value)."""
        return (1 << 64) - 1 if self.scheme == "affine64" else MAX_HASH_32


def _inputs(hashes: np.ndarray, perms: Permutations) -> np.ndarray:
    """Shingle hashes → the values datasketch permutes: hashfunc's output, pre-mixed for affine
    (datasketch's `_fmix`: MurmurHash3's finaliser of the scheme's width)."""
    h = np.asarray(hashes, dtype=np.uint64)
    if perms.scheme == "affine64":
        return fmix64(h.copy())
    # 32-bit schemes: hashfunc returns 32 bits (sha1_hash32 in datasketch), we keep the low 32.
    low = h.astype(np.uint32)
    return fmix32(low) if perms.scheme == "affine32" else low.astype(np.uint64)


def _permute_into(values: np.ndarray, perms: Permutations, out: np.ndarray) -> np.ndarray:
    """Every permutation of every input value into `out`, (num_perm, len(values)): one row per
    permutation, so that the per-document minima below reduce along contiguous memory."""
    np.multiply(perms.a[:, None], values[None, :], out=out)  # wraps mod 2^width: the affine modulus
    out += perms.b[:, None]
    if perms.scheme == "legacy":
        # x mod (2^61 - 1) without a division (5x cheaper than %): 2^61 = 1 mod p, so x = hi*2^61 + lo
        # reduces to lo + hi < 2^61 + 8, and at most one subtraction of p remains.
        prime = np.uint64(MERSENNE_PRIME)
        high = out >> np.uint64(61)
        out &= prime
        out += high
        np.subtract(out, prime, out=out, where=out >= prime)
        out &= np.uint64(MAX_HASH_32)
    return out


def signature(hashes: np.ndarray, perms: Permutations) -> np.ndarray:
    """MinHash signature (uint64, length num_perm) of one set of shingle hashes (any order, repeats ok).

    An empty set gives `perms.max_value` everywhere, as an un-updated datasketch MinHash does; two
    empty documents then look identical, so the caller must keep them out of the comparisons.
    """
    return signatures([hashes], perms)[0]


def signatures(docs: Sequence[np.ndarray], perms: Permutations, chunk: int = CHUNK_VALUES) -> np.ndarray:
    """Signatures of many documents at once: (len(docs), num_perm) uint64, row i = signature(docs[i]).
    See `signatures_flat`."""
    lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    if not lengths.any():
        return np.full((len(docs), perms.num_perm), perms.max_value, dtype=np.uint64)
    values = np.concatenate([np.asarray(d, dtype=np.uint64) for d in docs])
    return signatures_flat(values, lengths, perms, chunk)


def signatures_flat(
    values: np.ndarray, lengths: np.ndarray, perms: Permutations, chunk: int = CHUNK_VALUES
) -> np.ndarray:
    """Signatures of documents whose shingle hashes are concatenated in `values`, `lengths[i]` of them
    for document i: (len(lengths), num_perm) uint64.

    The hashes are permuted in chunks of about `chunk` values (so memory stays bounded whatever the
    batch or document size), and each chunk is reduced to per-document minima with one
    `np.minimum.reduceat` over the document offsets. A document split across chunks is merged with
    `np.minimum`. Empty documents get the empty row (see `signature`).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.full((len(lengths), perms.num_perm), perms.max_value, dtype=np.uint64)
    if not lengths.any():
        return out
    values = _inputs(values, perms)
    rows = np.flatnonzero(lengths)  # reduceat cannot express an empty segment: skip those documents
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[rows]
    ends = starts + lengths[rows]
    step = max(1, min(chunk // perms.num_perm, len(values)))
    scratch = np.empty((perms.num_perm, step), dtype=values.dtype)  # reused: no page faults per chunk
    for lo in range(0, len(values), step):
        hi = min(lo + step, len(values))
        first = int(np.searchsorted(ends, lo, side="right"))  # documents overlapping [lo, hi)
        last = int(np.searchsorted(starts, hi, side="left"))
        offsets = np.maximum(starts[first:last], lo) - lo
        permuted = _permute_into(values[lo:hi], perms, scratch[:, : hi - lo])
        mins = np.minimum.reduceat(permuted, offsets, axis=1).T
        target = rows[first:last]
        out[target] = np.minimum(out[target], mins)
    return out


def jaccard_estimate(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """Estimated Jaccard similarity: the fraction of positions where the signatures agree."""
    if len(sig_a) != len(sig_b):
        raise ValueError(f"signatures of different lengths: {len(sig_a)} and {len(sig_b)}")
    return float(np.count_nonzero(np.asarray(sig_a) == np.asarray(sig_b))) / len(sig_a)


def jaccard_estimates(sigs_a: np.ndarray, sigs_b: np.ndarray) -> np.ndarray:
    """Row-wise `jaccard_estimate` of two (n, num_perm) arrays (or one row against n): float64 (n,)."""
    a, b = np.asarray(sigs_a), np.asarray(sigs_b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"signatures of different lengths: {a.shape[-1]} and {b.shape[-1]}")
    return np.count_nonzero(a == b, axis=-1) / a.shape[-1]


def to_lean_minhash(sig: np.ndarray, perms: Permutations) -> LeanMinHash:
    """The signature as a `datasketch.LeanMinHash` (for MinHashLSH, `jaccard`, serialisation)."""
    from datasketch import LeanMinHash

    return LeanMinHash(seed=perms.seed, hashvalues=np.asarray(sig).astype(perms.dtype), scheme=perms.scheme)
