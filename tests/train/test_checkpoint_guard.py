"""Checkpoints of another model, damaged checkpoints, bad training data, and a rank's error.

One tiny trained checkpoint (`tests.tiny_checkpoint`: 4 layers, 512-piece tokenizer) is copied per
test and damaged or mismatched on purpose. Resume, eval, export and generate must refuse another
model or tokenizer naming both values; damaged files must be named without a traceback; export
--overwrite must delete nothing but an export; bad data must be refused before any rank starts;
and a rank's error must reach the user once, from the launcher.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import selene
from selene.cli import main
from selene.errors import ConfigError, InputError, PathError
from selene.train.config import TrainConfig
from selene.train.launch import launch
from tests.tiny_checkpoint import SEQ_LEN, STEPS, make_checkpoint

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_checkpoint(tmp_path_factory.mktemp("ckpt"))


@pytest.fixture
def run(ckpt: str, tmp_path: Path) -> Path:
    """A private copy of the whole tiny run (tokens/ and train/), free to damage."""
    root = Path(ckpt).parents[2]
    shutil.copytree(root / "tokens", tmp_path / "tokens")
    shutil.copytree(root / "train", tmp_path / "train")
    return tmp_path


def step(run: Path) -> Path:
    return run / "train" / "checkpoints" / f"step-{STEPS:06d}"


def prefix(run: Path) -> str:
    return str(run / "tokens" / "data_text_document")


def train_config(run: Path, steps: int = STEPS + 2, **model: Any) -> TrainConfig:
    """The configuration `make_checkpoint` trained with (model fields overridable), into run/train."""
    return TrainConfig.model_validate(
        {
            "model": {"preset": "debug", **model},
            "parallel": {"dp_shard": 1},
            "steps": steps,
            "batch": {"seq_len": SEQ_LEN, "global_batch": 4, "micro_batch": 4},
            "optim": {"lr": 3e-3, "warmup_steps": 1},
            "data": {"prefixes": [prefix(run)]},
            "eval_every": 1000,
            "eval_batches": 1,
            "checkpoint": {"every": 1000, "keep": 1},
            "tensorboard": False,
            "device": "cpu",
            "out": str(run / "train"),
        }
    )


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` with the sha256 of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file()
    }  # fmt: skip


def edit_meta(path: Path, **changes: Any) -> None:
    meta = json.loads((path / "meta.json").read_text())
    for key, value in changes.items():
        if value is None:
            meta.pop(key, None)
        elif isinstance(value, dict):
            meta[key] = {**meta[key], **value}
        else:
            meta[key] = value
    (path / "meta.json").write_text(json.dumps(meta))


def other_tokenizer(path: Path) -> None:
    """A different sentencepiece model with the same 512 pieces (so only its fingerprint tells)."""
    from selene.tokenize.config import TokenizeConfig
    from selene.tokenize.spm import train
    from tests.tiny_checkpoint import corpus_lines

    path.write_bytes(
        train(iter(corpus_lines()[::2]), TokenizeConfig(vocab_size=512, model_type="bpe", threads=1))
    )


# ------------------------------------------------------------------------------ model shape


def test_checkpoint_records_shape_and_tokenizer(ckpt: str) -> None:
    meta = json.loads((Path(ckpt) / "meta.json").read_text())
    tok = Path(ckpt).parents[1] / "tokenizer.model"
    assert meta["model_args"]["n_layers"] == 4 and meta["model_args"]["vocab_size"] == 512
    assert meta["tokenizer_sha256"] == hashlib.sha256(tok.read_bytes()).hexdigest()
    assert meta["selene_version"] == selene.__version__


def test_resume_into_another_shape_is_refused_before_ranks_start(run: Path) -> None:
    before = snapshot(run / "train")
    with pytest.raises(ConfigError, match=r"n_layers: checkpoint 4, now 2") as e:
        launch(train_config(run, n_layers=2), str(run / "train"), 1)
    assert str(step(run)) in str(e.value)
    with pytest.raises(ConfigError, match=r"dim: checkpoint 64, now 128"):
        launch(train_config(run, dim=128), str(run / "train"), 1)
    assert snapshot(run / "train") == before  # nothing written, no rank started


def test_older_checkpoint_without_metadata_still_loads_strictly(run: Path) -> None:
    """Without model_args and tokenizer_sha256 the tensors themselves are compared."""
    edit_meta(step(run), model_args=None, tokenizer_sha256=None)
    with pytest.raises(ConfigError, match=r"n_layers: checkpoint 4, this run's model 2"):
        launch(train_config(run, n_layers=2), str(run / "train"), 1)
    with pytest.raises(
        ConfigError, match=r"tok_embeddings\.weight: checkpoint \[512, 64\], this run's model \[600, 64\]"
    ):
        launch(train_config(run, vocab_size=600), str(run / "train"), 1)
    from selene.eval.checkpoint_io import load_model

    loaded = load_model(str(step(run)))  # eval/export/generate: the shape comes from the config + index
    assert loaded.args.n_layers == 4 and loaded.args.vocab_size == 512


def test_eval_export_generate_refuse_weights_of_another_shape(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from selene.eval.checkpoint_io import load_model
    from selene.eval.export import export_hf

    edit_meta(step(run), model_args={"n_layers": 2})
    with pytest.raises(InputError, match=r"n_layers: checkpoint 4, its meta.json describes 2"):
        load_model(str(step(run)))
    with pytest.raises(InputError, match=r"n_layers: checkpoint 4"):
        export_hf(str(step(run)), str(run / "hf"))
    assert not (run / "hf").exists()
    edit_meta(step(run), model_args={"n_layers": 4, "ffn_dim": 128})
    assert main(["generate", "--checkpoint", str(run / "train"), "--prompt", "x", "--max-tokens", "2"]) == 1
    assert main(["eval", "--checkpoint", str(run / "train"), "--limit", "1"]) == 1
    err = capsys.readouterr().err
    assert (
        err.count("layers.0.feed_forward.w1.weight: checkpoint [192, 64], its meta.json describes [128, 64]")
        == 2
    )
    assert "Traceback" not in err


# ------------------------------------------------------------------------------ tokenizer


def test_tokenizer_fingerprint_mismatch_is_refused(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from selene.eval.checkpoint_io import tokenizer
    from selene.eval.export import export_hf

    saved = json.loads((step(run) / "meta.json").read_text())["tokenizer_sha256"]
    other_tokenizer(run / "train" / "tokenizer.model")
    now = hashlib.sha256((run / "train" / "tokenizer.model").read_bytes()).hexdigest()
    both = rf"checkpoint {saved[:16]}\.\.\., now {now[:16]}\.\.\."
    with pytest.raises(InputError, match=both):
        tokenizer(str(step(run)))
    with pytest.raises(InputError, match=both):
        export_hf(str(step(run)), str(run / "hf"))
    assert main(["generate", "--checkpoint", str(step(run)), "--prompt", "x", "--max-tokens", "2"]) == 1
    err = capsys.readouterr().err
    assert "another tokenizer" in err and "Traceback" not in err
    # resume: the data's tokenizer is compared with the checkpoint's
    other_tokenizer(run / "tokens" / "tokenizer.model")
    data_now = hashlib.sha256((run / "tokens" / "tokenizer.model").read_bytes()).hexdigest()
    with pytest.raises(InputError, match=r"tokens/tokenizer.model: sha256 .*/tokens/manifest.json records"):
        launch(train_config(run), str(run / "train"), 1)  # a tokenizer.model its manifest did not make
    manifest = json.loads((run / "tokens" / "manifest.json").read_text())
    manifest["tokenizer"]["sha256"] = data_now  # as if the data were tokenized again with it
    (run / "tokens" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match=rf"checkpoint {saved[:16]}\.\.\., now {data_now[:16]}\.\.\."):
        launch(train_config(run), str(run / "train"), 1)


# ------------------------------------------------------------------------------ damaged checkpoints


@pytest.mark.parametrize(
    "damage, named",
    [
        ("truncate_distcp", "__0_0.distcp: truncated"),
        ("garbage_meta", "meta.json: not valid JSON"),
        ("meta_not_object", "meta.json: a JSON object was expected"),
        ("bad_model_args", "meta.json: model_args.n_layers is 'four'"),
        ("garbage_index", ".metadata: unreadable"),
        ("missing_distcp", "__0_0.distcp: not found"),
        ("bitflip_distcp", "__0_0.distcp: sha256"),
    ],
)
def test_damaged_checkpoint_names_the_file(
    run: Path, damage: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from selene.eval.checkpoint_io import load_model

    s = step(run)
    distcp = s / "__0_0.distcp"
    if damage == "truncate_distcp":
        distcp.write_bytes(distcp.read_bytes()[: distcp.stat().st_size // 2])
    elif damage == "garbage_meta":
        (s / "meta.json").write_bytes(os.urandom(300))
    elif damage == "meta_not_object":
        (s / "meta.json").write_text("[1, 2]")
    elif damage == "bad_model_args":
        edit_meta(s, model_args={"n_layers": "four"})
    elif damage == "garbage_index":
        (s / ".metadata").write_bytes(os.urandom(2000))
    elif damage == "bitflip_distcp":  # decodes fine: only the sha256 meta.json records can tell
        data = bytearray(distcp.read_bytes())
        data[len(data) // 3] ^= 0x10
        distcp.write_bytes(bytes(data))
    else:
        distcp.unlink()
    with pytest.raises(InputError, match=named.replace(".", r"\.")) as e:
        load_model(str(s))
    assert str(s) in str(e.value)
    with pytest.raises(InputError, match=named.replace(".", r"\.")):  # resume: before any rank starts
        launch(train_config(run), str(run / "train"), 1)
    assert main(["export", "--checkpoint", str(s), "-o", str(run / "hf")]) == 1
    err = capsys.readouterr().err
    assert named in err.replace("\n", "") and "Traceback" not in err


def test_garbage_weights_become_one_clear_error(run: Path) -> None:
    """Bytes of the right length but not tensors: the recorded sha256 names the file; without that
    record (a checkpoint saved before it existed), DCP's CheckpointException (a BaseException) is
    turned into an InputError naming the checkpoint."""
    from selene.eval.checkpoint_io import load_model

    distcp = step(run) / "__0_0.distcp"
    distcp.write_bytes(os.urandom(distcp.stat().st_size))
    with pytest.raises(InputError, match=r"__0_0\.distcp: sha256 .* records"):
        load_model(str(step(run)))
    meta = json.loads((step(run) / "meta.json").read_text())
    assert "__0_0.distcp" in meta["files"] and ".metadata" in meta["files"]
    del meta["files"]
    (step(run) / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match=r"cannot load the checkpoint") as e:
        load_model(str(step(run)))
    assert str(step(run)) in str(e.value) and "Traceback" not in str(e.value)


def _count_hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files `check_digests` hashes from now on (by name), as it hashes them."""
    from selene.train import checkpoint_digests

    hashed: list[str] = []
    real = checkpoint_digests.sha256_of

    def counting(path: str) -> str:
        hashed.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(checkpoint_digests, "sha256_of", counting)
    return hashed


def test_a_verified_file_is_hashed_once_and_a_later_change_is_still_caught(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loads remember the sha256 of the files they verified (`_DigestCache`): an unchanged checkpoint
    is not hashed again, but a file changed after a verified load is — even with its size and mtime
    put back as they were (ctime cannot be)."""
    import time

    from selene.eval.checkpoint_io import load_model
    from selene.train.checkpoint import check_resume, model_args_of, read_meta
    from selene.train.checkpoint_digests import _DigestCache

    monkeypatch.setattr(_DigestCache, "SETTLE_NS", 0)  # the copy is fresh: remember it at once
    hashed = _count_hashes(monkeypatch)
    s = step(run)
    recorded = json.loads((s / "meta.json").read_text())["files"]
    load_model(str(s))
    assert sorted(hashed) == sorted(os.path.basename(n) for n in recorded)
    hashed.clear()
    load_model(str(s))
    args = model_args_of(read_meta(str(s)), str(s))
    assert args is not None
    check_resume(str(s), args)  # what a resume checks, in the launcher and in each rank
    assert hashed == []  # nothing changed: nothing hashed again

    distcp = s / "__0_0.distcp"
    before = distcp.stat()
    original = distcp.read_bytes()
    time.sleep(0.05)  # past the filesystem clock's tick: the write gets a new ctime
    data = bytearray(original)
    data[len(data) // 3] ^= 0x10
    distcp.write_bytes(bytes(data))
    os.utime(distcp, ns=(before.st_atime_ns, before.st_mtime_ns))  # size and mtime as they were
    after = distcp.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    with pytest.raises(InputError, match=r"__0_0\.distcp: sha256 .* records"):
        load_model(str(s))
    with pytest.raises(InputError, match=r"__0_0\.distcp: sha256 .* records"):
        launch(train_config(run), str(run / "train"), 1)
    # the right bytes back, as a new file (a new inode): hashed, and it passes
    (s / "distcp.tmp").write_bytes(original)
    os.replace(s / "distcp.tmp", distcp)
    hashed.clear()
    load_model(str(s))
    assert hashed == ["__0_0.distcp"]


def test_a_file_changed_just_before_its_hash_is_not_remembered(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written within `SETTLE_NS` of its hash could be written again within the same tick of
    the filesystem's clock, unseen by its stamps: it is hashed on every load until it settles. And
    SELENE_DIGEST_CACHE=off hashes every file on every load."""
    from selene.eval.checkpoint_io import load_model
    from selene.train.checkpoint_digests import _DigestCache

    hashed = _count_hashes(monkeypatch)
    s = step(run)
    n = len(json.loads((s / "meta.json").read_text())["files"])
    for _ in range(2):  # the copy was written just now
        load_model(str(s))
    assert len(hashed) == 2 * n
    monkeypatch.setattr(_DigestCache, "SETTLE_NS", 0)
    monkeypatch.setenv("SELENE_DIGEST_CACHE", "off")
    hashed.clear()
    for _ in range(2):
        load_model(str(s))
    assert len(hashed) == 2 * n


# ------------------------------------------------------------------------------ export --overwrite


def test_export_overwrite_never_deletes_a_train_dir(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from selene.eval.export import export_hf

    before = snapshot(run / "train")
    code = main(["export", "--checkpoint", str(step(run)), "-o", str(run / "train"), "--overwrite"])
    assert code == 2  # refused before anything: the output given is not an export
    err = capsys.readouterr().err.replace("\n", "")
    assert "is not a selene export" in err and "checkpoints" in err and "nothing was deleted" in err
    assert snapshot(run / "train") == before
    # a previous export is replaced; a directory with only user files is not
    export_hf(str(step(run)), str(run / "hf"))
    (run / "hf" / "stale").write_text("x")
    export_hf(str(step(run)), str(run / "hf"), overwrite=True)
    assert not (run / "hf" / "stale").exists() and (run / "hf" / "model.safetensors").exists()
    (run / "mine").mkdir()
    (run / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(PathError, match=r"not a selene export .*notes\.txt"):
        export_hf(str(step(run)), str(run / "mine"), overwrite=True)
    assert (run / "mine" / "notes.txt").read_text() == "keep me"


# ------------------------------------------------------------------------------ training data


def _truncate_idx(p: str) -> None:
    data = Path(p + ".idx").read_bytes()
    Path(p + ".idx").write_bytes(data[: len(data) - 40])


def _bad_header(p: str) -> None:
    data = bytearray(Path(p + ".idx").read_bytes())
    data[9:17] = (7).to_bytes(8, "little")  # version 7
    Path(p + ".idx").write_bytes(bytes(data))


def _longer_bin(p: str) -> None:
    with open(p + ".bin", "ab") as f:
        f.write(b"\0" * 64)


def _random_bin(p: str) -> None:
    size = Path(p + ".bin").stat().st_size
    Path(p + ".bin").write_bytes(
        np.random.default_rng(0).integers(0, 65535, size // 2, dtype=np.uint16).tobytes()
    )


def _shifted_pointer(p: str) -> None:
    from selene.tokenize.indexed import HEADER_SIZE

    data = bytearray(Path(p + ".idx").read_bytes())
    n = int.from_bytes(data[18:26], "little")
    at = HEADER_SIZE + 4 * n + 8 * 3  # the 4th sequence's pointer
    data[at : at + 8] = (int.from_bytes(data[at : at + 8], "little") + 2).to_bytes(8, "little")
    Path(p + ".idx").write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage, named",
    [
        (
            "missing",
            r"train\.data\.prefixes\[0\]: no token dataset at .*nope .*holds the prefixes \['data_text_document'\]",
        ),
        ("truncated_idx", r"data_text_document\.idx: truncated index"),
        ("bad_header", r"data_text_document\.idx: unsupported index version 7"),
        ("longer_bin", r"data_text_document\.bin: \d+ bytes, but .*\.idx describes \d+"),
        ("random_bin", r"data_text_document\.bin: token \d+ is id \d+, outside the vocabulary of 512"),
        ("shifted_pointer", r"data_text_document\.idx: sequence 3 starts at byte"),
    ],
)
def test_bad_training_data_is_refused_before_ranks_start(
    tmp_path: Path, run: Path, damage: str, named: str
) -> None:
    cfg = train_config(run)
    out = tmp_path / "fresh"
    cfg.out = str(out)
    p = prefix(run)
    if damage == "missing":
        cfg.data.prefixes = [str(run / "tokens" / "nope")]
    else:
        {"truncated_idx": _truncate_idx, "bad_header": _bad_header, "longer_bin": _longer_bin,
         "random_bin": _random_bin, "shifted_pointer": _shifted_pointer}[damage](p)  # fmt: skip
    with pytest.raises(PathError if damage == "missing" else InputError, match=named):  # a wrong path: exit 2
        launch(cfg, str(out), 1)
    assert not out.exists()  # refused before anything was written or launched


# ------------------------------------------------------------------------------ a rank's error


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_a_rank_error_reaches_the_user_once(run: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Damage only a rank can see (its RNG state): the launcher reports the rank and the file, once."""
    rng = step(run) / "rng" / "rank-00000.pt"
    rng.write_bytes(b"not a tensor")
    # without its recorded sha256 (a checkpoint saved before the record), which the launcher checks
    meta = json.loads((step(run) / "meta.json").read_text())
    del meta["files"]["rng/rank-00000.pt"]
    (step(run) / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError) as e:
        launch(train_config(run), str(run / "train"), 1)
    message = str(e.value)
    assert message.startswith("training failed on rank 0: ") and f"{rng}: unreadable RNG state" in message
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ChildFailedError" not in err and "unreadable RNG" not in err
    assert not list((run / "train").glob(".rank-errors-*"))


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_two_ranks_with_the_same_error_give_one_message(run: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Both ranks raise the same ConfigError: one message, its class (exit 2), naming both ranks."""
    cfg = train_config(run)
    cfg.parallel.dp_shard = 2  # per-rank batch 2, micro-batch 4
    out = run / "two"
    cfg.out = str(out)
    (run / "two.yaml").write_text(json.dumps(cfg.model_dump(mode="json")))
    assert main(["train", str(run / "two.yaml"), "--nproc-per-node", "2"]) == 2
    err = capfd.readouterr().err
    assert err.count("per-rank batch 2 is not divisible by train.batch.micro_batch 4") == 1
    assert "training failed on rank" in err and "too)" in err
    assert "Traceback" not in err and "ChildFailedError" not in err and "exitcode" not in err


def test_reusing_a_finished_run_of_another_model_is_refused(run: Path) -> None:
    """`selene train` skips a run whose last checkpoint exists, but only for the model asked for."""
    from selene.train.stage import run_train

    with pytest.raises(ConfigError, match=r"n_layers: checkpoint 4, now 2"):
        run_train(None, str(run / "train"), train_config(run, steps=STEPS, n_layers=2))
    assert run_train(None, str(run / "train"), train_config(run, steps=STEPS)).skipped


def test_launcher_reports_a_killed_rank_and_a_bug(tmp_path: Path) -> None:
    """Without a SeleneError: a bug is shown with its traceback (once); a rank killed without a word
    is named with its signal."""
    from selene.train.launch import rank_failure

    (tmp_path / "agent-h-1.json").write_text(json.dumps(
        {"failures": {"1": {"exitcode": -9, "signal": "SIGKILL", "time": 5}, "0": {"exitcode": -15, "signal": "SIGTERM", "time": 6}}}
    ))  # fmt: skip
    e = rank_failure(str(tmp_path), 1)
    assert "rank 1 was killed by SIGKILL" in str(e) and "out-of-memory" in str(e)
    for rank, (t, msg) in enumerate([(2.0, "boom"), (1.0, "gloo: connection closed")]):
        (tmp_path / f"rank-{rank:05d}.json").write_text(json.dumps(
            {"rank": rank, "time": t, "type": "RuntimeError", "selene": False, "message": msg,
             "traceback": f"Traceback (most recent call last):\nRuntimeError: {msg}\n"}
        ))  # fmt: skip
    e = rank_failure(str(tmp_path), 1)
    assert (
        type(e).__name__ == "SeleneError"
        and "rank 1" in str(e)
        and "a bug" in str(e)
        and "connection closed" in str(e)
    )
    (tmp_path / "rank-00002.json").write_text(json.dumps(
        {"rank": 2, "time": 3.0, "type": "InputError", "selene": True, "exit_code": 1, "message": "x.idx: damaged"}
    ))  # fmt: skip
    e = rank_failure(str(tmp_path), 1)  # a selene error explains the others, even when it came later
    assert isinstance(e, InputError) and str(e) == "training failed on rank 2: x.idx: damaged"
