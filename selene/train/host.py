"""The host's memory allocator, set for models that run on the CPU.

glibc's malloc serves every block above its mmap threshold (dynamic, at most 32 MiB by default) with
a fresh mmap and unmaps it on free. A CPU forward of a real batch allocates activations far above
that (125m at 16 × 512 tokens: 100 MB for one MLP activation), so every forward page-faults its
activations in anew and the kernel zeroes them: `selene generate --batch 16` of 512-token prompts
spent 4.0 s of system time in two prefills (2.1 million minor faults), 10% of its time to first
token. Raising the mmap threshold and the trim threshold lets freed blocks be reused from the heap
(0.57 million faults, 1.0 s; time to first token 9.9 -> 9.1 s). The process keeps the memory it
freed, up to the trim threshold, for its next forward: what a generation or evaluation process wants
(`selene.eval.checkpoint_io.load_model` sets it for CPU models), and what a training process wants too
(`selene.train.loop.run` sets it when the model trains on the CPU): a 125m step at 4 × 256 tokens
page-faulted 112,000-245,000 times (fp32 / bf16 autocast) and took 4.5-4.8 s / 2.8-2.9 s; with the
thresholds 0-25,000 / 3,000 faults and 4.0-4.3 s / 2.3-2.4 s (10% / 18% faster), for 3-4% more
resident memory (3.26 -> 3.34 GB, 3.39 -> 3.48 GB).

SELENE_HOST_ALLOCATOR=glibc in the environment leaves glibc's defaults (a process that must give
freed memory back at once; the baseline of benchmarks/train_command.py).
"""

from __future__ import annotations

import ctypes
import os
import sys

from selene.errors import ConfigError

M_TRIM_THRESHOLD = -1  # mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 30  # blocks below 1 GiB come from the heap and are reused
TRIM_THRESHOLD = (1 << 31) - 1  # free memory kept by the process before it is returned (2 GiB)

ENV = "SELENE_HOST_ALLOCATOR"
_set = False


def allocator_choice() -> str:
    """SELENE_HOST_ALLOCATOR: "reuse" (the default) or "glibc"; anything else is a ConfigError."""
    choice = os.environ.get(ENV, "reuse")
    if choice not in ("reuse", "glibc"):
        raise ConfigError(f"{ENV}={choice!r}: expected reuse (the default) or glibc (the C library's own thresholds)")
    return choice


def reuse_freed_memory() -> bool:
    """Set glibc's thresholds once per process (see the module doc); False where there is no glibc
    (macOS, musl) or it refuses, which leaves the allocator as it was."""
    global _set
    choice = allocator_choice()
    if _set:
        return True
    if not sys.platform.startswith("linux") or choice == "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _set = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return _set
