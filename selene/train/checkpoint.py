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

Beside this module: `checkpoint_index` (the DCP index against a model), `checkpoint_digests` (the
sha256 of every file, recorded and checked), `checkpoint_files` (the names and messages they share)
and `checkpoint_async` (the same save in the background, ``checkpoint.async``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import typing
from collections.abc import Iterator
from dataclasses import MISSING, fields
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.checkpoint.stateful import Stateful

from selene.errors import ConfigError, InputError, OutputError, SeleneError
from selene.manifest import versioned
from selene.model.args import ModelArgs
from selene.model.transformer import Transformer
from selene.train.checkpoint_digests import FILES, check_digests, gather_digests
from selene.train.checkpoint_files import DAMAGED, META, UNWRITTEN, short_error
from selene.train.checkpoint_index import check_files, check_tensors, read_dcp_metadata

_STEP = re.compile(r"^step-(\d{6,})$")
_OPTS = StateDictOptions(flatten_optimizer_state_dict=True, strict=False)
# Fields of ModelArgs that decide which tensors exist and their shapes (or what they mean): a resume
# must keep them. dropout, init_std, norm_eps and rope_theta may change between runs (max_seq_len
# too with RoPE: it has no parameter; learned positions have one row per position).
# kv_heads: n_kv_heads, or n_heads when unset (the same model either way)
SHAPE_FIELDS = ("n_layers", "dim", "n_heads", "kv_heads", "ffn_dim", "vocab_size", "norm", "positions", "mlp",
                "tie_embeddings", "bias")  # fmt: skip


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
    """The optimizers of the model parts, flattened to parameter names (layout independent).

    A part may have several optimizers (Muon on its hidden matrices, AdamW on the rest: each
    parameter in one of them); DCP takes them together, so the keys stay ``state.<fqn>.<name>`` and
    a checkpoint of one optimizer per part loads as before."""

    def __init__(self, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer]) -> None:
        self.parts, self.optims = parts, _by_part(parts, optims)

    def state_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, o in zip(self.parts, self.optims, strict=True):
            out.update(get_optimizer_state_dict(p, o, options=_OPTS))
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for p, o in zip(self.parts, self.optims, strict=True):
            set_optimizer_state_dict(p, o, state_dict, options=_OPTS)


def _by_part(parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer]) -> list[list[torch.optim.Optimizer]]:
    """The optimizers of each part, found by the parameters they step."""
    owned = [{id(p) for p in part.parameters()} for part in parts]
    out: list[list[torch.optim.Optimizer]] = [[] for _ in parts]
    for o in optims:
        first = next(p for g in o.param_groups for p in g["params"])
        out[next(i for i, ids in enumerate(owned) if id(first) in ids)].append(o)
    return out


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
    """Save step `step` on every rank; rank 0 writes meta.json last, then prunes to the last `keep`.

    `selene.train.checkpoint_async` saves the same files in the background with the same two ends,
    `begin_save` and `finish_save`."""
    path = begin_save(root, step)
    with write_errors(path):
        dcp.save(train_state(parts, optims), checkpoint_id=path)
    finish_save(root, path, step, meta, keep, rng_state())
    return path


@contextlib.contextmanager
def write_errors(path: str) -> Iterator[None]:
    """DCP's failure to write the checkpoint at `path` (its own exception, or the OS's) as one
    `OutputError` line naming the cause."""
    try:
        yield
    except CheckpointException as e:
        raise OutputError(f"{path}: cannot write the checkpoint ({checkpoint_cause(e)}); {UNWRITTEN}") from None
    except OSError as e:
        raise OutputError(f"{path}: cannot write the checkpoint ({short_error(e)}); {UNWRITTEN}") from None


def train_state(parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer]) -> dict[str, Stateful]:
    """What DCP saves and loads: the model parts and their optimizers, keyed by parameter names."""
    return {"model": ModelState(parts), "optim": OptimizerState(parts, optims)}


def begin_save(root: str, step: int) -> str:
    """The step's directory, emptied of an interrupted save of the same step, once every rank is here."""
    path = step_dir(root, step)
    if _rank() == 0 and os.path.exists(path):
        shutil.rmtree(path)
    _barrier()
    return path


def finish_save(
    root: str, path: str, step: int, meta: dict[str, Any], keep: int, rng: dict[str, torch.Tensor],
    group: dist.ProcessGroup | None = None,
) -> None:
    """After every rank's DCP files are written: each rank writes its RNG state `rng` and hashes its
    files, then rank 0 writes meta.json — the one completion marker (`complete_steps`) — and only
    then prunes to the last `keep` finished steps, so a save that dies on the way never costs the
    checkpoint before it. `group`: the process group of the collectives (a background save has its own)."""
    rank = _rank()
    try:
        os.makedirs(os.path.join(path, "rng"), exist_ok=True)
        torch.save(rng, os.path.join(path, "rng", f"rank-{rank:05d}.pt"))
    except OSError as e:
        raise OutputError(f"{path}: cannot write the checkpoint ({short_error(e)}); {UNWRITTEN}") from None
    _barrier(group)
    files = gather_digests(path, rank, group)
    if rank == 0:
        tmp = os.path.join(path, META + ".tmp")
        try:
            with open(tmp, "w") as f:
                json.dump(versioned({"step": step, **meta, FILES: files}), f, indent=1)
            os.replace(tmp, os.path.join(path, META))
        except OSError as e:
            raise OutputError(f"{tmp}: cannot write the checkpoint's metadata ({short_error(e)}); {UNWRITTEN}") from None
        for old in complete_steps(root)[:-keep]:
            shutil.rmtree(step_dir(root, old), ignore_errors=True)
    _barrier(group)


def unfinished_steps(root: str) -> list[str]:
    """Step directories under `root` without meta.json: saves that a kill or a crash interrupted."""
    if not os.path.isdir(root):
        return []
    return sorted(os.path.join(root, n) for n in os.listdir(root)
                  if _STEP.match(n) and not os.path.exists(os.path.join(root, n, META)))  # fmt: skip


def load(
    path: str, parts: list[torch.nn.Module], optims: list[torch.optim.Optimizer], args: ModelArgs,
    tokenizer_sha256: str | None = None,
) -> dict[str, Any]:
    """Load a finished checkpoint into this rank's parts and optimizers; returns its meta.

    `args` is the model this run builds: the checkpoint must hold exactly its tensors (`check_resume`)."""
    meta = check_resume(path, args, tokenizer_sha256)
    dcp_load(train_state(parts, optims), path)
    rank = _rank()
    rng = os.path.join(path, "rng", f"rank-{rank:05d}.pt")
    if os.path.exists(rng):  # same rank count: restore exactly; another layout: keep the fresh seed
        try:
            _set_rng_state(torch.load(rng, weights_only=True))
        except Exception as e:
            raise InputError(f"{rng}: unreadable RNG state of rank {rank} ({short_error(e)}); {DAMAGED}") from None
    return meta


def rng_state() -> dict[str, torch.Tensor]:
    """This rank's generators: the CPU's, and its current GPU's when it trains on one (dropout and
    any sampling on a GPU draw from the GPU's generator, not the CPU's)."""
    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def _set_rng_state(state: torch.Tensor | dict[str, torch.Tensor]) -> None:
    """Restore `rng_state` (or a bare CPU state, as checkpoints saved before the GPU's was kept);
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
        raise InputError(f"{path}: cannot load the checkpoint ({checkpoint_cause(e)}); {DAMAGED}") from None
    except SeleneError:
        raise
    except Exception as e:
        raise InputError(f"{path}: cannot load the checkpoint ({short_error(e)}); {DAMAGED}") from None


def checkpoint_cause(e: BaseException) -> str:
    """The first rank's exception inside a `CheckpointException`, in one line (not the tracebacks)."""
    failures = getattr(e, "failures", None)
    if isinstance(failures, dict) and failures:
        rank = min(failures)
        exc = failures[rank][0] if isinstance(failures[rank], tuple) else failures[rank]
        return f"rank {rank}: {short_error(exc)}" if len(failures) > 1 else short_error(exc)
    return short_error(e)




# ----------------------------------------------------------------------------- what a checkpoint is for




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
        raise InputError(f"{meta_path}: not valid JSON ({e}); {DAMAGED}") from None
    if not isinstance(meta, dict):
        raise InputError(f"{meta_path}: a JSON object was expected, got {type(meta).__name__}; {DAMAGED}")
    if not isinstance(meta.get("step"), int) or isinstance(meta.get("step"), bool):
        raise InputError(f"{meta_path}: no integer 'step' (found {meta.get('step')!r}); {DAMAGED}")
    return meta


def model_args_of(meta: dict[str, Any], path: str) -> ModelArgs | None:
    """The `ModelArgs` recorded in `meta` (None when the checkpoint predates them); every field is
    type-checked, and unknown fields (from a newer selene) are an error, not silently dropped."""
    raw = meta.get("model_args")
    where = f"{os.path.join(path, META)}: model_args"
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InputError(f"{where} is {type(raw).__name__}, not an object; {DAMAGED}")
    hints = typing.get_type_hints(ModelArgs)
    known = {f.name for f in fields(ModelArgs)}
    extra = sorted(set(raw) - known)
    if extra:
        raise InputError(f"{where} has fields this selene does not know: {extra}; was it written by a newer selene?")
    for f in fields(ModelArgs):
        if f.name not in raw:
            if f.default is MISSING:
                raise InputError(f"{where} lacks {f.name!r}; {DAMAGED}")
            continue
        if not _fits(raw[f.name], hints[f.name]):
            raise InputError(f"{where}.{f.name} is {raw[f.name]!r}, not a valid {_type_name(hints[f.name])}; {DAMAGED}")
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




def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def _barrier(group: dist.ProcessGroup | None = None) -> None:
    if dist.is_initialized():
        dist.barrier(group=group)
