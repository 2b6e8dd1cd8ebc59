"""Load a training checkpoint for evaluation, generation and export: one plain process, no process group.

Training saves with DCP under whatever layout it ran (FSDP shards, TP, PP stages), but keyed by the
unsharded parameter names (`selene.train.checkpoint`), so any single process can read the full
tensors back. We build the `Transformer` on the meta device, materialise it on the target device and
let DCP fill its plain tensors: DCP runs without a process group when none is initialised, and its
default planner only reads the keys we ask for, so the optimizer state ("optim.*") is never touched
and need not even be loadable.

A checkpoint path may be a step directory (``.../checkpoints/step-000100``), the run's
``checkpoints`` directory or the run's train directory; the latter two resolve to the latest
*finished* step (one with ``meta.json``, the completion marker).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, fields
from typing import Any

import sentencepiece
import torch
import torch.distributed.checkpoint as dcp

from selene.errors import ConfigError, InputError
from selene.manifest import TokenizeManifest
from selene.train.checkpoint import META, complete_steps, step_dir
from selene.train.model import ModelArgs, Transformer


@dataclass
class LoadedModel:
    """A model ready for inference (eval mode, float32) with where it came from."""

    model: Transformer
    args: ModelArgs
    meta: dict[str, Any]
    tokenizer_path: str | None
    path: str  # the resolved step directory


def resolve(checkpoint: str) -> str:
    """The step directory `checkpoint` names: itself, or the latest finished step under it."""
    if not os.path.isdir(checkpoint):
        raise InputError(f"checkpoint {checkpoint!r} is not a directory (pass a checkpoints/step-NNNNNN directory)")
    if os.path.exists(os.path.join(checkpoint, META)):
        return checkpoint
    for root in (checkpoint, os.path.join(checkpoint, "checkpoints")):
        steps = complete_steps(root)
        if steps:
            return step_dir(root, steps[-1])
    found = sorted(os.listdir(checkpoint))
    partial = [n for n in found if n.startswith("step-")]
    hint = (
        f"step directories without {META} (interrupted saves): {partial}" if partial
        else f"it contains {found[:20]}{' ...' if len(found) > 20 else ''}"
    )
    raise InputError(
        f"{checkpoint} is not a checkpoint: no {META} here and no finished checkpoints/step-NNNNNN under it; "
        f"{hint}. Pass a step directory written by `selene train`."
    )


def read_meta(path: str) -> dict[str, Any]:
    with open(os.path.join(path, META)) as f:
        meta: dict[str, Any] = json.load(f)
    return meta


def model_args_of(meta: dict[str, Any], path: str) -> ModelArgs:
    """`ModelArgs` from meta.json; unknown keys (from a newer selene) are an error, not silently dropped."""
    raw = meta.get("model_args")
    if not isinstance(raw, dict):
        raise InputError(f"{path}/{META} has no model_args; was it written by an older selene?")
    known = {f.name for f in fields(ModelArgs)}
    extra = sorted(set(raw) - known)
    if extra:
        raise InputError(f"{path}/{META}: model_args has fields this selene does not know: {extra}")
    return ModelArgs(**raw)


def tokenizer_path(path: str, meta: dict[str, Any] | None = None) -> str | None:
    """Absolute path of the checkpoint's tokenizer (meta's entry is relative to the step directory);
    None when training had none. A listed but missing file is an error: the checkpoint was copied
    without its run directory."""
    meta = meta if meta is not None else read_meta(path)
    rel = meta.get("tokenizer")
    if not rel:
        return None
    tok = os.path.normpath(os.path.join(path, rel))
    if not os.path.exists(tok):
        raise InputError(
            f"checkpoint {path} names tokenizer {rel!r} but {tok} does not exist; copy the run's "
            "tokenizer.model next to its checkpoints/ directory"
        )
    return tok


def load_model(checkpoint: str, device: str | torch.device = "cpu") -> LoadedModel:
    """The model of a checkpoint saved under any layout, in this process, for inference."""
    path = resolve(checkpoint)
    meta = read_meta(path)
    args = model_args_of(meta, path)
    tok = tokenizer_path(path, meta)
    with torch.device("meta"):
        model = Transformer(args)
    model.to_empty(device=device)
    # Recomputes the (non-persistent) RoPE tables; the parameter values are overwritten by the load.
    model.init_weights(buffer_device=torch.device(device))
    # Tied embeddings appear under both names; loading twice into one tensor is harmless.
    state = dict(model.state_dict())
    try:
        with warnings.catch_warnings():  # "assuming the intent is to load in a single process": it is
            warnings.simplefilter("ignore", UserWarning)
            dcp.load({"model": state}, checkpoint_id=path)
    except Exception as e:  # DCP wraps reader failures in its own CheckpointException
        raise InputError(f"{path}: cannot load the model weights ({type(e).__name__}: {e})") from None
    model.eval()
    return LoadedModel(model=model, args=args, meta=meta, tokenizer_path=tok, path=path)


def _token_manifest(meta: dict[str, Any]) -> tuple[TokenizeManifest, str] | None:
    """The tokenize manifest next to the first training data prefix that has one, and its path."""
    from selene.io.dataset import MANIFEST, token_manifest

    for prefix in meta.get("config", {}).get("data", {}).get("prefixes", []) or []:
        if (m := token_manifest(prefix)) is not None:
            return m, os.path.join(os.path.dirname(prefix) or ".", MANIFEST)
    return None


def check_vocab(sp: sentencepiece.SentencePieceProcessor, args: ModelArgs, meta: dict[str, Any], where: str) -> None:
    """The tokenizer must fit the model (ids < model vocab; a padded model vocabulary is fine) and be
    the one the data was tokenized with (equal to the manifest's size, when the manifest is still there)."""
    n = int(sp.vocab_size())
    if n > args.vocab_size:
        raise ConfigError(
            f"{where}: the tokenizer has {n} pieces but the model's vocabulary is {args.vocab_size}; "
            "this tokenizer is not the one the model was trained with"
        )
    found = _token_manifest(meta)
    if found is not None and found[0].tokenizer.vocab_size != n:
        raise ConfigError(
            f"{where}: the tokenizer has {n} pieces but the tokenize manifest {found[1]} says "
            f"{found[0].tokenizer.vocab_size}; "
            "the tokenizer next to the checkpoint is not the one the data was tokenized with"
        )


def tokenizer(checkpoint: str) -> sentencepiece.SentencePieceProcessor:
    """The checkpoint's sentencepiece tokenizer, checked against the model's vocabulary."""
    path = resolve(checkpoint)
    meta = read_meta(path)
    tok = tokenizer_path(path, meta)
    if tok is None:
        raise InputError(f"checkpoint {path} has no tokenizer (it was trained on data without tokenizer.model)")
    sp = sentencepiece.SentencePieceProcessor()
    try:
        with open(tok, "rb") as f:
            sp.load_from_serialized_proto(f.read())
    except (RuntimeError, OSError) as e:
        raise InputError(f"{tok}: not a sentencepiece model ({e})") from None
    check_vocab(sp, model_args_of(meta, path), meta, path)
    return sp


def eod_id(sp: sentencepiece.SentencePieceProcessor, meta: dict[str, Any]) -> int:
    """The end-of-document id: the tokenize manifest's, else sentencepiece's eos (selene trains its
    tokenizers with the EOD piece as eos)."""
    found = _token_manifest(meta)
    if found is not None and found[0].tokenizer.eod_id >= 0:
        return found[0].tokenizer.eod_id
    if sp.eos_id() < 0:
        raise InputError("the tokenizer has no end-of-document (eos) piece")
    return int(sp.eos_id())
