"""Checkpoints with `torch.distributed.checkpoint` (DCP): resharded on load, any layout to any layout.

A checkpoint is ``<dir>/step-NNNNNN/``: the DCP files of the model and optimizer state (keyed by the
unsharded parameter names, so a checkpoint saved at dp_shard=2 loads at tp=2 × pp=2), one RNG file per
rank, and ``meta.json`` (step, data cursor, config, layout) written last by rank 0 — the completion
marker: a directory without it is an interrupted save and is never loaded.

``meta.json`` also records what the weights are for: the model's shape (``model_args``) and the
sha256 of the tokenizer the data was made with (``tokenizer_sha256``), and the tokenize fingerprint
of each data prefix (``data_fingerprints``: `selene.train.renew`). Every load checks them against
what it is asked to do (`check_resume`, and `selene.eval.checkpoint_io` for eval/export/generate) and
checks the DCP index (``.metadata``) against the model before reading a byte of weights: every
tensor of the model present with its shape, no tensor in the checkpoint the model lacks (a 4-layer
checkpoint does not load into a 2-layer model), every file the index names present and long enough.
A mismatch names the field, the checkpoint's value and the one asked for; a damaged file is named.
Checkpoints written before ``tokenizer_sha256`` existed load the same way, minus that comparison.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import typing
from dataclasses import MISSING, fields
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint import FileSystemReader
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.metadata import Metadata, TensorStorageMetadata
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.checkpoint.stateful import Stateful

from selene.errors import ConfigError, InputError, OutputError, SeleneError
from selene.model.args import ModelArgs
from selene.model.transformer import Transformer
from selene.procs import home

META = "meta.json"
DCP_METADATA = ".metadata"  # torch.distributed.checkpoint's index of the tensors and their files
_STEP = re.compile(r"^step-(\d{6,})$")
_OPTS = StateDictOptions(flatten_optimizer_state_dict=True, strict=False)
# Fields of ModelArgs that decide which tensors exist and their shapes (or what they mean): a resume
# must keep them. dropout, init_std, norm_eps and rope_theta may change between runs (max_seq_len
# too with RoPE: it has no parameter; learned positions have one row per position).
# kv_heads: n_kv_heads, or n_heads when unset (the same model either way)
SHAPE_FIELDS = ("n_layers", "dim", "n_heads", "kv_heads", "ffn_dim", "vocab_size", "norm", "positions", "mlp",
                "tie_embeddings", "bias")  # fmt: skip
_DAMAGED = (
    "this checkpoint is damaged: use an earlier step-NNNNNN directory (or delete this one to resume from the one before)"
)
_UNWRITTEN = (
    "this step is left unfinished (no meta.json), so nothing takes it for a checkpoint: free space or fix "
    "permissions, then rerun `selene train` to resume from the last finished step"
)


class ModelState(Stateful):
    """All model parts of this rank as one state dict (pipeline stages keep the full model's names).

    Loads are strict: each part gets exactly its own keys and every one of them must be there."""

    def __init__(self, parts: list[torch.nn.Module]) -> None:
        self.parts = parts
        self._keys: list[set[str]] = []

    def state_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        self._keys = []
        for p in self.parts:
            own = get_model_state_dict(p)
            self._keys.append(set(own))
            out.update(own)
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        keys = self._keys or [set(get_model_state_dict(p)) for p in self.parts]
        for p, own in zip(self.parts, keys, strict=True):
            part = {k: v for k, v in state_dict.items() if k in own}
            set_model_state_dict(p, part, options=StateDictOptions(strict=True))


class OptimizerState(Stateful):
    """The optimizers of the model parts, flattened to parameter names (layout independent)."""

    def __init__(self, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer]) -> None:
        self.parts, self.optims = parts, optims

    def state_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, o in zip(self.parts, self.optims, strict=True):
            out.update(get_optimizer_state_dict(p, o, options=_OPTS))
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for p, o in zip(self.parts, self.optims, strict=True):
            set_optimizer_state_dict(p, o, state_dict, options=_OPTS)


def step_dir(root: str, step: int) -> str:
    return os.path.join(root, f"step-{step:06d}")


def complete_steps(root: str) -> list[int]:
    """Steps with a finished checkpoint under `root`, ascending."""
    if not os.path.isdir(root):
        return []
    steps = []
    for name in os.listdir(root):
        m = _STEP.match(name)
        if m and os.path.exists(os.path.join(root, name, META)):
            steps.append(int(m.group(1)))
    return sorted(steps)


def save(
    root: str, step: int, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer],
    meta: dict[str, Any], keep: int,
) -> str:
    """Save step `step` on every rank; rank 0 writes meta.json last, then prunes to the last `keep`."""
    path = step_dir(root, step)
    rank = dist.get_rank() if dist.is_initialized() else 0
    if rank == 0 and os.path.exists(path):
        shutil.rmtree(path)  # an interrupted save of the same step
    _barrier()
    try:
        dcp.save({"model": ModelState(parts), "optim": OptimizerState(parts, optims)}, checkpoint_id=path)
        os.makedirs(os.path.join(path, "rng"), exist_ok=True)
        torch.save(_rng_state(), os.path.join(path, "rng", f"rank-{rank:05d}.pt"))
    except CheckpointException as e:
        raise OutputError(f"{path}: cannot write the checkpoint ({checkpoint_cause(e)}); {_UNWRITTEN}") from None
    except OSError as e:
        raise OutputError(f"{path}: cannot write the checkpoint ({_short(e)}); {_UNWRITTEN}") from None
    _barrier()
    files = _gather_digests(path, rank)
    if rank == 0:
        tmp = os.path.join(path, META + ".tmp")
        try:
            with open(tmp, "w") as f:
                json.dump({"step": step, **meta, FILES: files}, f, indent=1)
            os.replace(tmp, os.path.join(path, META))
        except OSError as e:
            raise OutputError(f"{tmp}: cannot write the checkpoint's metadata ({_short(e)}); {_UNWRITTEN}") from None
        for old in complete_steps(root)[:-keep]:
            shutil.rmtree(step_dir(root, old), ignore_errors=True)
    _barrier()
    return path


def load(
    path: str, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer], args: ModelArgs,
    tokenizer_sha256: str | None = None,
) -> dict[str, Any]:
    """Load a finished checkpoint into this rank's parts and optimizers; returns its meta.

    `args` is the model this run builds: the checkpoint must hold exactly its tensors (`check_resume`)."""
    meta = check_resume(path, args, tokenizer_sha256)
    dcp_load({"model": ModelState(parts), "optim": OptimizerState(parts, optims)}, path)
    rank = dist.get_rank() if dist.is_initialized() else 0
    rng = os.path.join(path, "rng", f"rank-{rank:05d}.pt")
    if os.path.exists(rng):  # same rank count: restore exactly; another layout: keep the fresh seed
        try:
            _set_rng_state(torch.load(rng, weights_only=True))
        except Exception as e:
            raise InputError(f"{rng}: unreadable RNG state of rank {rank} ({_short(e)}); {_DAMAGED}") from None
    return meta


def _rng_state() -> dict[str, torch.Tensor]:
    """This rank's generators: the CPU's, and its current GPU's when it trains on one (dropout and
    any sampling on a GPU draw from the GPU's generator, not the CPU's)."""
    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def _set_rng_state(state: torch.Tensor | dict[str, torch.Tensor]) -> None:
    """Restore `_rng_state` (or a bare CPU state, as checkpoints saved before the GPU's was kept);
    a GPU state is restored only where a GPU is in use, a CPU run of a GPU checkpoint keeps its seed."""
    if isinstance(state, torch.Tensor):
        torch.set_rng_state(state)
        return
    torch.set_rng_state(state["cpu"])
    if "cuda" in state and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.set_rng_state(state["cuda"])


def resume_source(root: str, load: str | None, resume: bool) -> str | None:
    """The checkpoint a run starts from: `load` when given, else the latest finished step under
    `root` when resuming, else None (step 0)."""
    if load:
        return load
    steps = complete_steps(root) if resume else []
    return step_dir(root, steps[-1]) if steps else None


def dcp_load(state: dict[str, Any], path: str) -> None:
    """`dcp.load`, with its failures as one `InputError` naming the checkpoint and the cause.

    DCP raises `CheckpointException`, which derives from BaseException: ``except Exception`` misses it."""
    try:
        dcp.load(state, checkpoint_id=path)
    except CheckpointException as e:
        raise InputError(f"{path}: cannot load the checkpoint ({checkpoint_cause(e)}); {_DAMAGED}") from None
    except SeleneError:
        raise
    except Exception as e:
        raise InputError(f"{path}: cannot load the checkpoint ({_short(e)}); {_DAMAGED}") from None


def checkpoint_cause(e: BaseException) -> str:
    """The first rank's exception inside a `CheckpointException`, in one line (not the tracebacks)."""
    failures = getattr(e, "failures", None)
    if isinstance(failures, dict) and failures:
        rank = min(failures)
        exc = failures[rank][0] if isinstance(failures[rank], tuple) else failures[rank]
        return f"rank {rank}: {_short(exc)}" if len(failures) > 1 else _short(exc)
    return _short(e)


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")


# ----------------------------------------------------------------------------- what a checkpoint is for


def sha256_of(path: str) -> str:
    """sha256 of the file's bytes, read in 8 MiB blocks into one reused buffer (no allocation a block;
    hashlib releases the GIL while it hashes one, so threads hash several files at once)."""
    h = hashlib.sha256()
    buf = bytearray(8 << 20)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


def read_meta(path: str) -> dict[str, Any]:
    """``meta.json`` of the step directory `path`; `InputError` naming the file when it is missing,
    unreadable, not JSON or not a checkpoint's metadata."""
    meta_path = os.path.join(path, META)
    try:
        with open(meta_path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise InputError(f"{path} is not a finished checkpoint (no {META}); pass a step-NNNNNN directory") from None
    except OSError as e:
        raise InputError(f"{meta_path}: cannot read it ({e.strerror or e})") from None
    try:
        meta = json.loads(raw)
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
        raise InputError(f"{meta_path}: not valid JSON ({e}); {_DAMAGED}") from None
    if not isinstance(meta, dict):
        raise InputError(f"{meta_path}: a JSON object was expected, got {type(meta).__name__}; {_DAMAGED}")
    if not isinstance(meta.get("step"), int) or isinstance(meta.get("step"), bool):
        raise InputError(f"{meta_path}: no integer 'step' (found {meta.get('step')!r}); {_DAMAGED}")
    return meta


def model_args_of(meta: dict[str, Any], path: str) -> ModelArgs | None:
    """The `ModelArgs` recorded in `meta` (None when the checkpoint predates them); every field is
    type-checked, and unknown fields (from a newer selene) are an error, not silently dropped."""
    raw = meta.get("model_args")
    where = f"{os.path.join(path, META)}: model_args"
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InputError(f"{where} is {type(raw).__name__}, not an object; {_DAMAGED}")
    hints = typing.get_type_hints(ModelArgs)
    known = {f.name for f in fields(ModelArgs)}
    extra = sorted(set(raw) - known)
    if extra:
        raise InputError(f"{where} has fields this selene does not know: {extra}; was it written by a newer selene?")
    for f in fields(ModelArgs):
        if f.name not in raw:
            if f.default is MISSING:
                raise InputError(f"{where} lacks {f.name!r}; {_DAMAGED}")
            continue
        if not _fits(raw[f.name], hints[f.name]):
            raise InputError(f"{where}.{f.name} is {raw[f.name]!r}, not a valid {_type_name(hints[f.name])}; {_DAMAGED}")
    try:
        return ModelArgs(**raw)
    except SeleneError as e:
        raise InputError(f"{where}: {e}") from None


def _fits(value: Any, hint: Any) -> bool:
    if typing.get_origin(hint) is typing.Literal:
        return value in typing.get_args(hint)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return True


def _type_name(hint: Any) -> str:
    if typing.get_origin(hint) is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(hint))
    return getattr(hint, "__name__", str(hint))


def shape_diffs(saved: ModelArgs, now: ModelArgs) -> list[str]:
    """``"n_layers: checkpoint 4, now 2"`` for every shape field that differs."""
    names = SHAPE_FIELDS + (("max_seq_len",) if "learned" in (saved.positions, now.positions) else ())
    return [f"{n}: checkpoint {getattr(saved, n)!r}, now {getattr(now, n)!r}" for n in names
            if getattr(saved, n) != getattr(now, n)]  # fmt: skip


def expected_tensors(args: ModelArgs) -> dict[str, tuple[int, ...]]:
    """DCP keys (``model.<fqn>``) and shapes of the model `args` describes (built on the meta device)."""
    with torch.device("meta"):
        model = Transformer(args)
    return {f"model.{k}": tuple(v.shape) for k, v in model.state_dict().items()}


def read_dcp_metadata(path: str) -> Metadata:
    """DCP's index of the checkpoint at `path`; `InputError` naming ``.metadata`` when it cannot be read."""
    md_path = os.path.join(path, DCP_METADATA)
    if not os.path.exists(md_path):
        raise InputError(f"{md_path}: not found (the index of the checkpoint's tensors); {_DAMAGED}")
    try:
        md = FileSystemReader(path).read_metadata()
    except Exception as e:  # a pickle of garbage raises anything: UnpicklingError, EOFError, ValueError ...
        raise InputError(f"{md_path}: unreadable ({_short(e)}); {_DAMAGED}") from None
    if not isinstance(md, Metadata) or not isinstance(getattr(md, "state_dict_metadata", None), dict):
        raise InputError(f"{md_path}: not a torch.distributed.checkpoint index; {_DAMAGED}")
    return md


def check_files(path: str, md: Metadata) -> None:
    """Every data file the index names exists and holds the byte ranges the index gives it."""
    need: dict[str, int] = {}
    for info in (md.storage_data or {}).values():
        rel = getattr(info, "relative_path", None)
        if rel is None:
            continue
        need[rel] = max(need.get(rel, 0), int(info.offset) + int(info.length))
    for rel, n in sorted(need.items()):
        f = os.path.join(path, rel)
        try:
            size = os.path.getsize(f)
        except OSError:
            raise InputError(f"{f}: not found, but {os.path.join(path, DCP_METADATA)} lists it; {_DAMAGED}") from None
        if size < n:
            raise InputError(f"{f}: truncated: {size} bytes, but the checkpoint's index needs {n}; {_DAMAGED}")


def check_tensors(
    path: str, md: Metadata, expected: dict[str, tuple[int, ...]], what: str, error: type[SeleneError] = InputError,
    hint: str = "",
) -> None:
    """The checkpoint's model tensors are exactly `expected` (names and shapes), or `error` naming the
    differences, the checkpoint's side first."""
    have = {k: tuple(v.size) for k, v in md.state_dict_metadata.items()
            if k.startswith("model.") and isinstance(v, TensorStorageMetadata)}  # fmt: skip
    problems: list[str] = []
    layers_have, layers_want = _layers(have), _layers(expected)
    if layers_have != layers_want:
        problems.append(f"n_layers: checkpoint {layers_have}, {what} {layers_want}")
    # tensors of the layers only one side has are covered by the n_layers line
    beyond = {k for k in set(have) ^ set(expected) if (i := _layer_of(k)) is not None and i >= min(layers_have, layers_want)}
    missing = sorted(set(expected) - set(have) - beyond)
    extra = sorted(set(have) - set(expected) - beyond)
    for k in sorted(set(have) & set(expected)):
        if have[k] != expected[k]:
            problems.append(f"{k[6:]}: checkpoint {list(have[k])}, {what} {list(expected[k])}")
    if missing:
        problems.append(f"missing from the checkpoint: {_names(missing)}")
    if extra:
        problems.append(f"only in the checkpoint: {_names(extra)}")
    if problems:
        shown = problems[:6] + ([f"... {len(problems) - 6} more"] if len(problems) > 6 else [])
        tail = f". {hint}" if hint else ""
        raise error(f"checkpoint {path} holds another model than {what}: " + "; ".join(shown) + tail)


_LAYER = re.compile(r"^model\.layers\.(\d+)\.")


def _layer_of(key: str) -> int | None:
    m = _LAYER.match(key)
    return int(m.group(1)) if m else None


def _layers(keys: typing.Iterable[str]) -> int:
    found = [i for k in keys if (i := _layer_of(k)) is not None]
    return max(found) + 1 if found else 0


def _names(keys: list[str]) -> str:
    short = [k[6:] for k in keys]
    return ", ".join(short[:4]) + (f" and {len(short) - 4} more" if len(short) > 4 else "")


def check_tokenizer(
    meta: dict[str, Any], path: str, sha_now: str | None, now: str, error: type[SeleneError], fix: str = ""
) -> None:
    """The tokenizer recorded in the checkpoint is the one in use now (both sha256), when both are
    known; `fix` ends the error (what the caller's user can do about it)."""
    saved = meta.get("tokenizer_sha256")
    if isinstance(saved, str) and sha_now and saved != sha_now:
        raise error(
            f"checkpoint {path} was trained with another tokenizer: tokenizer sha256 checkpoint {saved[:16]}..., "
            f"now {sha_now[:16]}... ({now}); the token ids would mean other pieces" + (f". {fix}" if fix else "")
        )


RETRAIN_HINT = (
    "To train from step 0 on the data there now: `selene train CFG --force`, or in a pipeline "
    "`selene run CFG --until train --force train` (a plain `selene run CFG` moves the old training "
    "directory aside to <out>.previous-<time> and retrains by itself)"
)
"""What ends an error about a checkpoint trained on other token data than the run's now."""

_RESUME_HINT = (
    "Set train.model back to the checkpoint's shape, or train from step 0 (--force, or a new out "
    "directory; train.checkpoint.resume: false)"
)


def check_resume(
    path: str, args: ModelArgs, tokenizer_sha256: str | None = None, now: str = "the tokenizer of the training data"
) -> dict[str, Any]:
    """The meta of the checkpoint `path` after checking that it can continue a run of model `args`
    with the tokenizer `tokenizer_sha256`: `ConfigError` naming every differing field (checkpoint's
    value, then now) or tensor, `InputError` naming the damaged file. Reads no weights."""
    meta = read_meta(path)
    saved = model_args_of(meta, path)
    if saved is not None and (diffs := shape_diffs(saved, args)):
        raise ConfigError(f"checkpoint {path} is of another model: " + "; ".join(diffs) + f". {_RESUME_HINT}")
    check_tokenizer(meta, path, tokenizer_sha256, now, ConfigError, RETRAIN_HINT)
    md = read_dcp_metadata(path)
    check_tensors(path, md, expected_tensors(args), "this run's model", ConfigError, _RESUME_HINT)
    check_files(path, md)
    check_digests(path, meta)
    return meta


FILES = "files"
"""meta.json's record of every file of the step: relative path -> [bytes, sha256]. DCP keeps no
checksums, so a flipped bit inside tensor bytes would load without a word."""


def _digests(path: str, names: list[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name in names:
        f = os.path.join(path, name)
        if os.path.isfile(f):
            out[name] = [os.path.getsize(f), sha256_of(f)]
    return out


def _gather_digests(path: str, rank: int) -> dict[str, list[Any]]:
    """The digests of the step's files, for rank 0's meta.json. Each rank hashes the files it has just
    written (still in the page cache: ``__<rank>_*.distcp`` and its RNG state), in parallel across
    ranks; rank 0 then hashes what no rank claimed (the index, and any file of another naming)."""
    own = sorted(n for n in os.listdir(path) if n.startswith(f"__{rank}_") and n.endswith(".distcp"))
    own.append(os.path.join("rng", f"rank-{rank:05d}.pt"))
    try:
        mine = _digests(path, own)
    except OSError as e:
        raise OutputError(f"{path}: cannot read back the checkpoint to record its sha256 ({_short(e)}); {_UNWRITTEN}") from None
    gathered: list[Any] = [mine]
    if dist.is_initialized():
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, mine)
    if rank != 0:
        return {}
    files = {k: v for d in gathered for k, v in (d or {}).items()}
    rest = [
        os.path.relpath(os.path.join(d, n), path)
        for d, _, names in os.walk(path)
        for n in names
        if not n.startswith(META)
    ]
    files.update(_digests(path, sorted(r for r in rest if r not in files)))
    return dict(sorted(files.items()))


def check_digests(path: str, meta: dict[str, Any]) -> None:
    """Every file meta.json records has its size and sha256 (checkpoints saved before the record
    existed are not checked). Files are hashed in parallel threads (hashlib releases the GIL).

    A file this user has verified before and that has not changed since is not read again: the
    sha256 it hashed to is remembered (`_DigestCache`) under its identity and change stamps, and a
    stamp that differs means a new hash. A 1.3B model's checkpoint (weights and optimizer state,
    ~16 GB) is then hashed once, not on every eval, export, generate and resume of every rank. A
    changed, truncated, replaced or corrupted-through-the-filesystem file is still caught on the
    next load; what a stamp cannot see is the disk rotting under unchanged metadata, so a
    remembered digest expires after `_DigestCache.MAX_AGE_S` and ``SELENE_DIGEST_CACHE=off`` hashes
    every file every time."""
    import concurrent.futures as cf

    files = meta.get(FILES)
    if not isinstance(files, dict) or not files:
        return
    where = os.path.join(path, META)
    cache = _DigestCache.load()

    def check(item: tuple[str, Any]) -> None:
        name, rec = item
        f = os.path.join(path, name)
        try:
            st = os.stat(f)
        except OSError:
            raise InputError(f"{f}: not found, but {where} records it; {_DAMAGED}") from None
        if not (isinstance(rec, list) and len(rec) == 2):
            raise InputError(f"{where}: the record of {name} is not [bytes, sha256]; {_DAMAGED}")
        if st.st_size != rec[0]:
            raise InputError(f"{f}: {st.st_size} bytes, but {where} records {rec[0]}; {_DAMAGED}")
        if isinstance(rec[1], str) and cache.known(st) == rec[1]:
            return  # this very file, unchanged since it hashed to rec[1]
        started = _now_ns()
        if (digest := sha256_of(f)) != rec[1]:
            raise InputError(f"{f}: sha256 {digest[:16]}..., but {where} records {str(rec[1])[:16]}...; {_DAMAGED}")
        cache.remember(f, st, digest, started)

    with cf.ThreadPoolExecutor(max_workers=min(8, len(files))) as pool:
        list(pool.map(check, sorted(files.items())))
    cache.save()


class _DigestCache:
    """sha256 digests of checkpoint files verified before, in ``<selene home>/cache/checkpoint-sha256.json``.

    An entry is keyed by the file's identity (device, inode) and holds its size, mtime_ns and
    ctime_ns at the time of the hash: a write to the file, a truncation, a replacement (a new inode)
    or a copy elsewhere changes one of them, and a changed stamp is a miss, never a digest taken on
    trust. ctime in particular cannot be set back by a user (``touch -d``, ``cp -p``, ``rsync -t`` set
    mtime only). Two guards keep a stamp meaningful:

    - a file changed within `SETTLE_NS` before its hash began is hashed but not remembered (git's
      "racily clean" rule): a filesystem stamps with a coarse clock, so a second write in the same
      tick as the hashed one would leave every stamp as it was;
    - the stamps are read before the hash and again after it; a file that changed meanwhile is not
      remembered.

    A hit also needs the digest meta.json records: the cache only ever saves re-reading a file,
    it never vouches for a file meta.json does not. Entries expire after `MAX_AGE_S` (bit rot under
    unchanged metadata is then caught within that time), the file keeps the `LIMIT` most recent ones,
    and every failure to read or write it (a read-only home, two processes saving at once) just
    means hashing again. On NFS, a change made on another client shows in the stamps here once the
    attribute cache lets it (``actimeo``, seconds).
    """

    SETTLE_NS = 2_000_000_000
    MAX_AGE_S = 7 * 24 * 3600
    LIMIT = 4096

    def __init__(self, entries: dict[str, list[Any]] | None, file: str | None) -> None:
        import threading

        self.entries = entries if entries is not None else {}
        self.file = file  # None: off (SELENE_DIGEST_CACHE=off)
        self.new: dict[str, list[Any]] = {}
        self.lock = threading.Lock()

    @classmethod
    def load(cls) -> _DigestCache:
        if os.environ.get("SELENE_DIGEST_CACHE", "").strip().lower() in ("0", "off", "false", "no"):
            return cls(None, None)
        file = str(home() / "cache" / "checkpoint-sha256.json")
        return cls(cls._read(file), file)

    @staticmethod
    def _read(file: str) -> dict[str, list[Any]]:
        try:
            with open(file, "rb") as f:
                data = json.loads(f.read())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _key(st: os.stat_result) -> str:
        return f"{st.st_dev}:{st.st_ino}"

    @staticmethod
    def _stamps(st: os.stat_result) -> list[int]:
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]

    def known(self, st: os.stat_result) -> str | None:
        """The sha256 this file (as `st` finds it) hashed to when verified, if nothing changed since."""
        if self.file is None:
            return None
        entry = self.entries.get(self._key(st))
        if not (isinstance(entry, list) and len(entry) >= 5 and isinstance(entry[3], str)):
            return None
        if entry[:3] != self._stamps(st) or not isinstance(entry[4], int):
            return None
        if _now_ns() - entry[4] > self.MAX_AGE_S * 1_000_000_000:
            return None
        return entry[3]

    def remember(self, path: str, st: os.stat_result, digest: str, started_ns: int) -> None:
        """Keep `digest` of the file `path`, hashed from `started_ns` on, whose stamps before the hash
        were `st` — unless it changed within `SETTLE_NS` before the hash or while it ran."""
        if self.file is None or max(st.st_mtime_ns, st.st_ctime_ns) > started_ns - self.SETTLE_NS:
            return
        try:
            after = os.stat(path)
        except OSError:
            return
        if self._key(after) != self._key(st) or self._stamps(after) != self._stamps(st):
            return
        with self.lock:
            self.new[self._key(st)] = [*self._stamps(st), digest, started_ns, os.path.abspath(path)]

    def save(self) -> None:
        """Merge the new entries into the file as it is now (another process may have saved since),
        keep the `LIMIT` most recent, write it atomically. Nothing new: nothing written."""
        if self.file is None or not self.new:
            return
        merged = {**self._read(self.file), **self.new}

        def when(item: tuple[str, Any]) -> int:
            v = item[1]
            return v[4] if isinstance(v, list) and len(v) >= 5 and isinstance(v[4], int) else 0

        kept = dict(sorted(merged.items(), key=when)[-self.LIMIT :])
        tmp = f"{self.file}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.file), exist_ok=True)
            with open(tmp, "w") as f:
                json.dump(kept, f)
            os.replace(tmp, self.file)
        except OSError:
            import contextlib

            with contextlib.suppress(OSError):
                os.remove(tmp)


def _now_ns() -> int:
    import time

    return time.time_ns()


def _barrier() -> None:
    if dist.is_initialized():
        dist.barrier()
