"""Data integrity on read and write: shards checked against their manifest, decode errors that name the
file and row group, full disks that leave nothing partial and resume, the tokenizer's vocabulary cap."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import random
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from selene.cli import main
from selene.errors import InputError, OutputError
from selene.io import dataset, fs, integrity
from selene.tokenize.manifest import TokenizeManifest
from tests.corpus import document_manifest
from tests.pipeline_runs import ROOT, subprocess_env

WORDS = [
    "the",
    "of",
    "and",
    "river",
    "stone",
    "light",
    "market",
    "garden",
    "winter",
    "paper",
    "signal",
    "harbour",
    "copper",
    "lantern",
]
TASKS = ROOT / "data" / "tasks" / "mini_piqa.jsonl"


def _docs(n: int, words: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [
        (f"doc-{i}", " ".join(rng.choice(WORDS) + str(rng.randrange(50)) for _ in range(words)))
        for i in range(n)
    ]


def make_dataset(
    directory: Path, n: int = 90, shard_docs: int = 30, words: int = 120, row_group_bytes: int = 4000
) -> Path:
    """A finished document dataset whose shards have several row groups each."""
    docs = _docs(n, words)
    shards = []
    for k in range(0, n, shard_docs):
        part = docs[k : k + shard_docs]
        table = pa.table(
            {
                "id": [d[0] for d in part],
                "text": [d[1] for d in part],
                "source": ["s"] * len(part),
                "meta": ["{}"] * len(part),
            },
            schema=dataset.DOC_SCHEMA,
        )
        path = str(directory / dataset.shard_name(len(shards)))
        shards.append(dataset.write_table(path, table, row_group_bytes=row_group_bytes))
    removed = dataset.write_table(str(directory / dataset.REMOVED), dataset.REMOVED_SCHEMA.empty_table())
    dataset.write_manifest(str(directory), document_manifest(shards, removed, {"s": n}))
    return directory


def flip_bit(path: Path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x10
    path.write_bytes(bytes(data))


def row_group_span(path: Path, group: int) -> tuple[int, int]:
    """Byte range of one row group's column chunks."""
    md = dataset.open_parquet(str(path)).metadata.row_group(group)
    cols = [md.column(c) for c in range(md.num_columns)]
    start = min(
        c.data_page_offset if c.dictionary_page_offset is None else c.dictionary_page_offset for c in cols
    )
    return start, start + sum(c.total_compressed_size for c in cols)


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    integrity.forget()
    return make_dataset(tmp_path / "in")


# ------------------------------------------------------------------------------ reading


STAGE_ARGS = {
    "dedup": [],
    "decontaminate": ["--tasks", str(TASKS)],
    "blend": ["--epochs", "s=1"],
    "tokenize": ["--vocab-size", "400"],
}


@pytest.mark.parametrize("stage", list(STAGE_ARGS))
def test_flipped_bit_names_the_shard_in_every_stage(
    stage: str, ds: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shard = ds / "part-00001.parquet"
    flip_bit(shard)
    out = tmp_path / "out"
    assert main([stage, "-i", str(ds), "-o", str(out), *STAGE_ARGS[stage]]) == 1
    err = capsys.readouterr().err
    assert str(shard) in err and "sha256" in err and "manifest.json" in err and "--force" in err, err
    assert "Traceback" not in err and "vocab" not in err  # tokenize: the file, not a vocabulary error
    assert not (out / "manifest.json").exists()


def test_flipped_bit_is_caught_before_any_data_is_decoded(ds: Path) -> None:
    """Every reader, also those that read one column or a few rows, sees the check on first open."""
    shard = ds / "part-00000.parquet"
    flip_bit(shard, at=0.9)  # in the last row groups: a reader of the first rows would not see it
    with pytest.raises(InputError, match="sha256"):
        dataset.take_rows(str(shard), [0, 1], ["id"])
    with pytest.raises(InputError, match="sha256"):
        next(dataset.iter_row_groups(str(shard), ["id"]))


def test_verified_once_per_process_and_again_when_the_file_changes(
    ds: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard = ds / "part-00000.parquet"
    reads = []
    real = integrity._read_hashed
    monkeypatch.setattr(integrity, "_read_hashed", lambda p, n: reads.append(p) or real(p, n))
    for _ in range(3):
        assert dataset.open_parquet(str(shard)).read(columns=["id"]).num_rows == 30
    assert reads == [str(shard)]
    original = shard.read_bytes()
    flip_bit(shard)
    with pytest.raises(InputError, match="sha256"):
        dataset.open_parquet(str(shard))
    shard.write_bytes(original)  # restored: accepted again
    assert dataset.open_parquet(str(shard)).read().num_rows == 30


def test_remote_shards_are_verified_too(tmp_path: Path) -> None:
    """Object stores (memory:// here) take the buffered path: read once into memory while hashed."""
    from tests.corpus import write_dataset

    integrity.forget()
    root = f"memory://integrity-{uuid.uuid4().hex[:8]}"
    write_dataset(root, _docs(40, 50), shard_docs=20)
    shard = f"{root}/part-00001.parquet"
    assert dataset.open_parquet(shard).read().num_rows == 20
    data = bytearray(fs.read_bytes(shard))
    data[len(data) // 2] ^= 1
    fs.atomic_write(shard, bytes(data))
    with pytest.raises(InputError, match=f"{shard}: corrupt shard: sha256"):
        dataset.open_parquet(shard)


def test_truncated_shard_names_the_file_and_sizes(ds: Path) -> None:
    shard = ds / "part-00002.parquet"
    size = shard.stat().st_size
    with open(shard, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(InputError) as e:
        list(dataset.iter_row_groups(str(shard)))
    msg = str(e.value)
    assert str(shard) in msg and f"{size // 2} bytes" in msg and str(size) in msg and "truncated" in msg
    assert "footer" in msg  # why no row group can be read at all


def test_corrupt_row_group_named_with_and_without_a_manifest(ds: Path, tmp_path: Path) -> None:
    shard = ds / "part-00000.parquet"
    n_groups = dataset.open_parquet(str(shard)).metadata.num_row_groups
    assert n_groups >= 3
    start = row_group_span(shard, 1)[0]
    data = bytearray(shard.read_bytes())
    data[start + 20 : start + 28] = b"\xff" * 8  # inside row group 1's first page
    # a file no manifest lists (a work file): the read that fails names the row group
    work = tmp_path / "out" / "_work" / "x.parquet"
    work.parent.mkdir(parents=True)
    work.write_bytes(bytes(data))
    with pytest.raises(InputError) as e:
        list(dataset.iter_row_groups(str(work)))
    assert f"{work}: corrupt Parquet file: row group 1 of {n_groups}" in str(e.value)
    assert "rerun the command with --force" in str(e.value)
    with pytest.raises(InputError, match=f"row group 1 of {n_groups}"):
        dataset.open_parquet(str(work)).read()  # a whole-file read finds the group too
    # a shard of a finished dataset: the digest fails first, and the message says where it breaks
    shard.write_bytes(bytes(data))
    with pytest.raises(InputError) as e:
        dataset.open_parquet(str(shard))
    assert "sha256" in str(e.value) and f"row group 1 of {n_groups} fails to decode" in str(e.value)


# ------------------------------------------------------------------------------ writing


def _enospc_after(monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    """Every local write fails with ENOSPC once `budget` bytes were written (fsspec's local file: the
    lowest Python layer under every selene writer)."""
    from fsspec.implementations.local import LocalFileOpener

    left = [budget]
    real = LocalFileOpener.write

    def write(self: LocalFileOpener, data: bytes) -> int:
        left[0] -= len(data)
        if left[0] < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, data)  # type: ignore[no-any-return]

    monkeypatch.setattr(LocalFileOpener, "write", write)


@pytest.mark.parametrize(
    "code, words",
    [
        (errno.ENOSPC, "no space left"),
        (errno.EDQUOT, "quota"),
        (errno.EROFS, "read-only"),
        (errno.EACCES, "permission denied"),
    ],
)
def test_atomic_open_turns_os_errors_into_output_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    from fsspec.implementations.local import LocalFileOpener

    def fail(self: LocalFileOpener, data: bytes) -> int:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(LocalFileOpener, "write", fail)
    target = tmp_path / "d" / "x.npy"
    with pytest.raises(OutputError) as e:
        fs.save_npy(str(target), __import__("numpy").arange(10))
    assert (
        repr(str(target)) in str(e.value) and words in str(e.value) and errno.errorcode[code] in str(e.value)
    )
    assert os.listdir(tmp_path / "d") == []  # neither the final name nor a temporary


def test_parquet_sink_on_a_full_disk_leaves_nothing(
    ds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = dataset.open_parquet(str(ds / "part-00000.parquet")).read()
    _enospc_after(monkeypatch, 5000)
    target = tmp_path / "o" / "part-00000.parquet"
    with pytest.raises(OutputError, match="no space left"):
        dataset.write_table(str(target), table, row_group_bytes=2000)
    assert os.listdir(tmp_path / "o") == []


def _tree(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def _digests_are_the_files(out: Path) -> None:
    """Every file the manifest lists has the sha256 it records (written while hashing, not read back)."""
    m = dataset.read_manifest(str(out))
    assert m is not None
    listed = [*m.shards, *([m.removed] if m.removed is not None else [])]
    assert listed
    for entry in listed:
        assert fs.sha256_file(str(out / entry.name)) == entry.sha256, entry.name


def _no_partial_files(out: Path) -> None:
    assert not (out / "manifest.json").exists()
    for p in out.rglob("*"):
        assert ".tmp-" not in p.name, p
        if p.suffix == ".parquet":
            dataset.open_parquet(str(p)).read()  # whatever has a final name is complete


def _inputs(stage: str, ds: Path, tmp_path: Path) -> list[str]:
    """The input options of `stage`: the dataset, or (ingest) raw files of the ingest tests."""
    if stage != "ingest":
        return ["-i", str(ds), *STAGE_ARGS[stage]]
    from tests.ingest.test_ingest import build_corpus

    raw = tmp_path / "raw"
    build_corpus(raw)
    return ["--source", f"pile={raw}/pile/*.jsonl.zst", "--source", f"cc={raw}/web/*.warc.gz"]


@pytest.mark.parametrize("stage", ["ingest", "dedup", "tokenize"])
def test_full_disk_in_process_then_rerun_resumes_identically(
    stage: str, ds: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _inputs(stage, ds, tmp_path)
    ref = tmp_path / "ref"
    assert main([stage, "-o", str(ref), *args]) == 0
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        _enospc_after(m, sum(p.stat().st_size for p in ref.rglob("*") if p.is_file()) // 2)
        assert main([stage, "-o", str(out), *args]) == 1
    err = capsys.readouterr().err
    assert "cannot write" in err and str(out) in err and "no space left" in err and "Traceback" not in err, (
        err
    )
    _no_partial_files(out)
    assert main([stage, "-o", str(out), *args]) == 0
    assert _tree(out) == _tree(ref)
    _digests_are_the_files(out)


def _selene(args: list[str], tmp: Path, fsize: int | None = None) -> subprocess.CompletedProcess[str]:
    """`selene ARGS` in a subprocess; `fsize`: RLIMIT_FSIZE, so that the kernel fails any write past it
    (EFBIG; SIGXFSZ ignored), as a full disk fails a write."""
    code = "import sys; from selene.cli import main; sys.exit(main(sys.argv[1:]))"
    if fsize is not None:
        code = (
            "import resource, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({fsize}, {fsize})); " + code
        )
    env = subprocess_env(tmp, SELENE_PREFECT="off")
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_file_size_limit_in_a_subprocess_then_rerun_resumes(ds: Path, tmp_path: Path) -> None:
    ref, out = tmp_path / "ref", tmp_path / "out"
    args = ["dedup", "-i", str(ds)]
    assert _selene([*args, "-o", str(ref)], tmp_path).returncode == 0
    biggest = max(p.stat().st_size for p in ref.glob("part-*.parquet"))
    failed = _selene([*args, "-o", str(out)], tmp_path, fsize=biggest // 2)
    assert failed.returncode == 1, failed.stderr
    assert "cannot write" in failed.stderr and "EFBIG" in failed.stderr and str(out) in failed.stderr
    assert "Traceback" not in failed.stderr
    _no_partial_files(out)
    assert _selene([*args, "-o", str(out)], tmp_path).returncode == 0
    assert _tree(out) == _tree(ref)


@pytest.fixture
def small_tmpfs(tmp_path: Path):  # type: ignore[no-untyped-def]
    """An 8 MiB tmpfs (root and a kernel that allows it; else the test is skipped): room for a small
    dedup's work files (many small ones: a page each) once the filler is gone."""
    mnt = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_real_full_disk_on_tmpfs_then_free_space_and_resume(
    small_tmpfs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    integrity.forget()
    src = make_dataset(tmp_path / "big", n=240, shard_docs=60, words=400)
    ref = tmp_path / "ref"
    assert main(["dedup", "-i", str(src), "-o", str(ref)]) == 0
    need = sum(p.stat().st_size for p in ref.rglob("*") if p.is_file())
    filler = small_tmpfs / "filler"
    filler.write_bytes(b"\0" * ((8 << 20) - need // 2))  # leaves about half of what dedup writes
    out = small_tmpfs / "out"
    assert main(["dedup", "-i", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "no space left" in err and "ENOSPC" in err and str(out) in err and "Traceback" not in err, err
    _no_partial_files(out)
    filler.unlink()  # space freed: the same command resumes
    assert main(["dedup", "-i", str(src), "-o", str(out)]) == 0
    assert _tree(out) == _tree(ref)


# ------------------------------------------------------------------------------ tokenize


def test_vocab_size_beyond_what_the_sample_supports(
    ds: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tok"
    assert main(["tokenize", "-i", str(ds), "-o", str(out), "--vocab-size", "1000000"]) == 2
    err = capsys.readouterr().err
    assert (
        "1,000,000 pieces requested" in err and "supports at most" in err and "--allow-smaller-vocab" in err
    ), err
    most = int(err.split("supports at most ")[1].split(".")[0].replace(",", ""))
    assert 64 < most < 1_000_000
    assert not (out / "manifest.json").exists()
    assert (
        main(["tokenize", "-i", str(ds), "-o", str(out), "--vocab-size", "1000000", "--allow-smaller-vocab"])
        == 0
    )
    m = dataset.read_manifest(str(out), TokenizeManifest)
    assert m is not None and m.tokenizer.vocab_size == most and m.tokenizer.vocab_size_requested == 1_000_000
    body = json.loads((out / "manifest.json").read_text())
    assert body["tokenizer"]["vocab_size"] == most
    # what the sample supports is accepted without the flag
    assert main(["tokenize", "-i", str(ds), "-o", str(tmp_path / "t2"), "--vocab-size", str(most)]) == 0
