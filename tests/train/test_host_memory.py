"""The host allocator's setting for CPU models (`selene.train.host`): a freed large block (a
forward's activations) is reused by the next allocation instead of being page-faulted in anew."""

from __future__ import annotations

import subprocess
import sys

import pytest

from selene.errors import ConfigError

CYCLES = """
import ctypes, resource, sys
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
if sys.argv[1] == "reuse":
    from selene.train.host import reuse_freed_memory
    assert reuse_freed_memory()
size = 64 << 20  # an MLP activation of a real CPU batch
for i in range(4):  # allocate, touch every page, free; count faults after the first
    if i == 1:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    block = libc.malloc(size)
    libc.memset(block, 1, size)
    libc.free(block)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", CYCLES, mode], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator only")
def test_a_freed_large_block_is_reused() -> None:
    default = _faults("default")
    if default < 1000:
        pytest.skip(f"this allocator reuses freed 64 MiB blocks already ({default} page faults in 3 cycles)")
    assert _faults("reuse") < default / 100  # 3 × 16,384 pages of 4 KiB faulted in by default, ~0 reused



def test_selene_host_allocator_glibc_leaves_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    from selene.train import host

    monkeypatch.setattr(host, "_set", False)
    monkeypatch.setenv(host.ENV, "glibc")
    assert host.reuse_freed_memory() is False and host._set is False
    monkeypatch.setenv(host.ENV, "Glibc")  # a typo is an error naming the variable, not the default
    with pytest.raises(ConfigError, match="SELENE_HOST_ALLOCATOR='Glibc'"):
        host.reuse_freed_memory()
