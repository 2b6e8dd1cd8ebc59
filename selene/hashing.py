"""Vectorised hashing helpers shared by the stages (shingles, LSH band keys, task n-grams, MinHash inputs).

Python's `hash()` is salted per process; these are not, so files written by one worker mean the
same in every other.
"""

from __future__ import annotations

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplication by it is a bijection mod 2^64
_FMIX1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_FMIX32_1 = np.uint32(0x85EBCA6B)
_FMIX32_2 = np.uint32(0xC2B2AE35)
_S16 = np.uint32(16)
_S13 = np.uint32(13)


def fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, in place: an avalanching bijection on uint64."""
    h ^= h >> _S33
    h *= _FMIX1
    h ^= h >> _S33
    h *= _FMIX2
    h ^= h >> _S33
    return h


def fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser, in place: an avalanching bijection on uint32."""
    h ^= h >> _S16
    h *= _FMIX32_1
    h ^= h >> _S13
    h *= _FMIX32_2
    h ^= h >> _S16
    return h
