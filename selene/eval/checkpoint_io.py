"""Load a training checkpoint for evaluation, generation and export: one plain process, no process group.

Training saves with DCP under whatever layout it ran (FSDP shards, TP, PP stages), but keyed by the
unsharded parameter names (`selene.train.checkpoint`), so any single process can read the full
tensors back. We build the `Transformer` on the meta device, materialise it on the target device and
let DCP fill its plain tensors: DCP runs without a process group when none is initialised, and its
default planner only reads the keys we ask for, so the optimizer state ("optim.*") is never touched
and need not even be loadable.

Before a byte of weights is read, the checkpoint is checked against what it is asked to do: the
model its meta.json describes must be exactly the tensors of DCP's index (names and shapes; strict),
every file the index names must be there and long enough, and the tokenizer next to it must be the
one it was trained with (sha256 in meta.json). Each refusal is an `InputError` naming the file or both
values; so is every failure of DCP itself (its `CheckpointException` is not an `Exception`).

A checkpoint path may be a step directory (``.../checkpoints/step-000100``), the run's
``checkpoints`` directory or the run's train directory; the latter two resolve to the latest
*finished* step (one with ``meta.json``, the completion marker).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import ValidationError

from selene.errors import ConfigError, InputError, PathError
from selene.io.dataset import MANIFEST
from selene.model.args import ModelArgs
from selene.model.transformer import Transformer
from selene.tokenize.manifest import TokenizeManifest, token_manifest
from selene.tokenize.tiktoken_encodings import Spec
from selene.tokenize.tokenizer import Tokenizer, load_file
from selene.train import checkpoint as ckpt
from selene.train.args import model_args
from selene.train.checkpoint import complete_steps, step_dir
from selene.train.checkpoint_digests import check_digests, sha256_of
from selene.train.checkpoint_files import DCP_METADATA, META
from selene.train.checkpoint_index import check_files, check_tensors, read_dcp_metadata
from selene.train.config import ModelConfig
from selene.train.host import reuse_freed_memory

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def pick_device(name: str | torch.device | None = "auto") -> torch.device:
    """The device `name` asks for: ``auto`` (or None) is CUDA when torch sees a GPU, else the CPU;
    ``cuda`` where there is none is a `ConfigError` (not a traceback from the first tensor moved)."""
    if name is None or name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise ConfigError(f"device {name!r}: expected auto, cpu or cuda") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"device {name!r}: CUDA is not available here (torch {torch.__version__}); use --device cpu or auto"
        )
    if device.type not in ("cpu", "cuda"):
        raise ConfigError(f"device {name!r}: expected auto, cpu or cuda")
    return device


def pick_dtype(name: str | None, device: torch.device) -> torch.dtype:
    """The weights' dtype `name` asks for (fp32 | bf16); ``auto`` (or None): bf16 on CUDA, fp32 on CPU."""
    if name is None or name == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if name not in DTYPES:
        raise ConfigError(f"dtype {name!r}: expected auto, {' or '.join(DTYPES)}")
    return DTYPES[name]


@dataclass
class LoadedModel:
    """A model ready for inference (eval mode, float32 unless loaded with another dtype) with where it
    came from."""

    model: Transformer
    args: ModelArgs
    meta: dict[str, Any]
    tokenizer_path: str | None
    path: str  # the resolved step directory


def resolve(checkpoint: str) -> str:
    """The step directory `checkpoint` names: itself, or the latest finished step under it; a path
    that names none is the user's to fix (`PathError`)."""
    if not os.path.isdir(checkpoint):
        raise PathError(
            f"checkpoint {checkpoint!r} is not a directory (give a checkpoints/step-NNNNNN directory, or a "
            "train directory for its latest)"
        )
    if os.path.exists(os.path.join(checkpoint, META)):
        return checkpoint
    for root in (checkpoint, os.path.join(checkpoint, "checkpoints")):
        steps = complete_steps(root)
        if steps:
            return step_dir(root, steps[-1])
    found = sorted(os.listdir(checkpoint))
    partial = [
        os.path.join(root, n, META)
        for root in (checkpoint, os.path.join(checkpoint, "checkpoints"))
        if os.path.isdir(root)
        for n in sorted(os.listdir(root))
        if n.startswith("step-")
    ]
    hint = (
        f"missing: {', '.join(partial)} (an interrupted save, or a removed file)" if partial
        else f"it contains {found[:20]}{' ...' if len(found) > 20 else ''}"
    )
    raise PathError(
        f"{checkpoint} is not a checkpoint: no {META} here and no finished checkpoints/step-NNNNNN under it; "
        f"{hint}. Give a step directory written by `selene train`."
    )


def read_meta(path: str) -> dict[str, Any]:
    """meta.json of the step directory `path` (`InputError` naming it when damaged)."""
    return ckpt.read_meta(path)


def model_args_of(meta: dict[str, Any], path: str) -> ModelArgs:
    """`ModelArgs` from meta.json, type-checked; unknown keys (from a newer selene) are an error, not
    silently dropped. A checkpoint older than ``model_args`` gets them from its training config and
    the embedding's rows in DCP's index."""
    args = ckpt.model_args_of(meta, path)
    if args is not None:
        return args
    model = (meta.get("config") or {}).get("model") if isinstance(meta.get("config"), dict) else None
    if not isinstance(model, dict):
        raise InputError(
            f"{os.path.join(path, META)} has neither model_args nor config.model: it does not say which model it holds"
        )
    emb = read_dcp_metadata(path).state_dict_metadata.get("model.tok_embeddings.weight")
    size = getattr(emb, "size", None)
    if not size:
        raise InputError(f"{os.path.join(path, DCP_METADATA)}: no model.tok_embeddings.weight; not a selene checkpoint")
    try:
        return model_args(ModelConfig.model_validate(model), int(size[0]))
    except ValidationError as e:
        first = e.errors()[0]["msg"]
        raise InputError(f"{os.path.join(path, META)}: config.model is invalid ({e.error_count()} errors: {first})") from None


def tokenizer_path(path: str, meta: dict[str, Any] | None = None) -> str | None:
    """Absolute path of the checkpoint's tokenizer (meta's entry is relative to the step directory);
    None when training had none. A listed but missing file is an error: the checkpoint was copied
    without its run directory."""
    meta = meta if meta is not None else read_meta(path)
    rel = meta.get("tokenizer")
    if not rel:
        return None
    if not isinstance(rel, str):
        raise InputError(f"{os.path.join(path, META)}: 'tokenizer' is {rel!r}, not a path; the checkpoint is damaged")
    tok = os.path.normpath(os.path.join(path, rel))
    if not os.path.exists(tok):
        raise InputError(
            f"checkpoint {path} names tokenizer {rel!r} but {tok} does not exist; copy the run's "
            f"{os.path.basename(tok)} next to its checkpoints/ directory"
        )
    return tok


def load_model(
    checkpoint: str, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32
) -> LoadedModel:
    """The model of a checkpoint saved under any layout, in this process, for inference.

    The weights are read as saved (float32) and then cast to `dtype` (`cast`); eval scores in float32,
    generation on CUDA defaults to bf16 (`pick_dtype`)."""
    if torch.device(device).type == "cpu":
        reuse_freed_memory()  # a CPU forward's activations are reused, not page-faulted in each time
    path = resolve(checkpoint)
    meta = read_meta(path)
    args = model_args_of(meta, path)
    tok = tokenizer_path(path, meta)
    md = read_dcp_metadata(path)
    check_tensors(path, md, ckpt.expected_tensors(args), f"its {META} describes")
    check_files(path, md)
    check_digests(path, meta)
    with torch.device("meta"):
        model = Transformer(args)
    model.to_empty(device=device)
    # Recomputes the (non-persistent) RoPE tables; the parameter values are overwritten by the load.
    model.init_weights(buffer_device=torch.device(device))
    # Tied embeddings appear under both names; loading twice into one tensor is harmless.
    state = dict(model.state_dict())
    with warnings.catch_warnings():  # "assuming the intent is to load in a single process": it is
        warnings.simplefilter("ignore", UserWarning)
        ckpt.dcp_load({"model": state}, path)  # CheckpointException → InputError naming the checkpoint
    cast(model, dtype)
    model.eval()
    return LoadedModel(model=model, args=args, meta=meta, tokenizer_path=tok, path=path)


def cast(model: Transformer, dtype: torch.dtype) -> Transformer:
    """`model` with its parameters in `dtype`, in place; the RoPE tables stay float32 (`rotate`
    rotates in float32: bf16 tables would round the angles of far positions). Tied embeddings stay tied
    (`Module.to` converts a parameter in place, once however many modules hold it)."""
    if all(p.dtype == dtype for p in model.parameters()):
        return model
    rope = model.rope
    model.to(dtype)
    if rope is not None:
        model.rope = rope
    return model


def _token_manifest(meta: dict[str, Any]) -> tuple[TokenizeManifest, str] | None:
    """The tokenize manifest next to the first training data prefix that has one, and its path."""
    for prefix in meta.get("config", {}).get("data", {}).get("prefixes", []) or []:
        if (m := token_manifest(prefix)) is not None:
            return m, os.path.join(os.path.dirname(prefix) or ".", MANIFEST)
    return None


def check_vocab(tok: Tokenizer, args: ModelArgs, meta: dict[str, Any], where: str) -> None:
    """The tokenizer must fit the model (ids < model vocab; a padded model vocabulary is fine) and be
    the one the data was tokenized with (equal to the manifest's size, when the manifest is still there)."""
    n = tok.vocab_size
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


def tokenizer(checkpoint: str) -> Tokenizer:
    """The checkpoint's tokenizer (a sentencepiece model, a tokenizer.json or a tiktoken encoding) with the end-of-document
    piece its data was made with (the tokenize manifest's, else the tokenizer's own EOS), checked
    against the model's vocabulary."""
    path = resolve(checkpoint)
    meta = read_meta(path)
    file = tokenizer_path(path, meta)
    if file is None:
        raise InputError(f"checkpoint {path} has no tokenizer (it was trained on data without a tokenizer file)")
    tok = load_tokenizer(file, meta)
    check_vocab(tok, model_args_of(meta, path), meta, path)
    ckpt.check_tokenizer(meta, path, sha256_of(file), file, InputError)
    return tok


def load_tokenizer(file: str, meta: dict[str, Any]) -> Tokenizer:
    """The tokenizer in `file` with the end-of-document piece of the data in ``meta["config"]["data"]``
    (its tokenize manifest's, else the tokenizer's own EOS): a checkpoint's meta.json, or a training
    run's config before any checkpoint exists."""
    found = _token_manifest(meta)
    info = found[0].tokenizer if found is not None else None
    spec = None
    if found is not None and found[0].tokenizer.tiktoken is not None:
        # a tiktoken encoding's pattern and special tokens are not in its file: the tokenize manifest has them
        spec = Spec.from_json(found[0].tokenizer.tiktoken.to_json(), found[1])
    return load_file(file, info.eod_piece if info is not None else None, spec)


def eod_id(tok: Tokenizer, meta: dict[str, Any]) -> int:
    """The end-of-document id: the tokenize manifest's, else the tokenizer's (selene trains its
    sentencepiece models with the EOD piece as eos)."""
    found = _token_manifest(meta)
    if found is not None and found[0].tokenizer.eod_id >= 0:
        return found[0].tokenizer.eod_id
    return tok.eod_id
