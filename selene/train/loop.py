"""The training loop, run in every process that torchrun starts (`selene.train.worker`).

One step: the global batch for this step (ramp-up) is read from the data cursor, each data-parallel
rank takes its share, gradients are accumulated over micro-batches (or over the pipeline's
micro-batches), clipped by the global norm across every mesh dimension, and the optimizers step with the
learning rate of the step. Everything a step depends on — weights, optimizer state, step, data cursor,
RNG — is in the checkpoint, so a resumed run logs exactly the losses of an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import shutil
import signal
import time
from typing import Any

import torch
import torch.distributed as dist

from selene.errors import ConfigError, InputError
from selene.manifest import versioned
from selene.model.init import num_params
from selene.tokenize.gpt_dataset import Cursor, take
from selene.tokenize.manifest import token_manifest
from selene.train import checkpoint
from selene.train.args import model_args
from selene.train.checkpoint_async import AsyncCheckpointer, clear_unfinished
from selene.train.config import TrainConfig
from selene.train.data import (
    attention_share,
    build_data,
    check_token_ids,
    data_fingerprints,
    document_masking,
    index_cache,
    rank_share,
    to_inputs,
    tokenizer_file,
    tokenizer_sha256,
)
from selene.train.dims import ParallelDims
from selene.train.evaluate import InRunEval, enabled
from selene.train.float8 import check_device as check_float8_device
from selene.train.float8 import matmul_share as float8_share
from selene.train.flops import flops_per_token
from selene.train.host import reuse_freed_memory
from selene.train.metrics import MetricsLogger
from selene.train.optim import build_optimizers, check_checkpoint_optimizer, set_lr
from selene.train.parallelize import build_parallel_model
from selene.train.peak import training_peak
from selene.train.schedule import batch_at, index_steps, lr_at, samples_needed


def resolve_device(cfg: TrainConfig) -> tuple[torch.device, str]:
    if cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available()):
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        # fp32 matmuls on tensor cores (TF32), as Megatron and torchtitan train: what stays fp32 under
        # bf16 (the loss's softmax inputs are bf16 matmuls already) and a whole fp32 run go ~8x faster
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        return torch.device("cuda", local), "nccl"
    return torch.device("cpu"), "gloo"


def init_distributed(backend: str) -> tuple[int, int]:
    """Join torchrun's process group; a plain `python` run becomes a group of one."""
    if not dist.is_initialized():
        if "RANK" not in os.environ:
            os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1")
            os.environ.setdefault("MASTER_PORT", str(_free_port()))
        dist.init_process_group(backend)
    return dist.get_rank(), dist.get_world_size()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def vocab_size_of(cfg: TrainConfig) -> int:
    """The model's vocabulary: configured, or the tokenizer's (manifest next to the token data)."""
    if cfg.model.vocab_size:
        return cfg.model.vocab_size
    for prefix in cfg.data.prefixes:
        if (m := token_manifest(prefix)) is not None:
            return m.tokenizer.vocab_size
    raise ConfigError(
        f"train.model.vocab_size is not set and no tokenize manifest.json sits next to the data prefixes "
        f"{cfg.data.prefixes}: set train.model.vocab_size to the tokenizer's vocabulary"
    )


class _Stop:
    """SIGTERM (a preempted job): finish the step, save a checkpoint, exit cleanly."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, self._handler)

    def _handler(self, signum: int, frame: Any) -> None:
        self.requested = True


def run(cfg: TrainConfig, out: str) -> dict[str, Any]:
    device, backend = resolve_device(cfg)
    if device.type == "cpu":
        reuse_freed_memory()  # each step's activations come from the heap, not fresh pages (selene.train.host)
    rank, world = init_distributed(backend)
    dims = ParallelDims(cfg.parallel.dp_replicate, cfg.parallel.dp_shard, cfg.parallel.tp, cfg.parallel.pp, world)
    mesh = dims.build_mesh(device.type)
    margs = model_args(cfg.model, vocab_size_of(cfg))
    seq = cfg.batch.seq_len or margs.max_seq_len
    if seq > margs.max_seq_len:
        raise ConfigError(f"train.batch.seq_len {seq} exceeds the model's max_seq_len {margs.max_seq_len}")
    torch.manual_seed(cfg.seed)
    memory_before = _peak_memory(device, 0.0)  # CPU: the process's high-water mark before the model exists
    check_float8_device(cfg.parallel, device)  # each rank on its own GPU (the launcher checked GPU 0)
    pm = build_parallel_model(margs, cfg.parallel, dims, mesh, device, cfg.seed)
    pm.masking = document_masking(cfg.data)
    optims = build_optimizers(pm.parts, cfg)
    dp_size = dims.dp
    dp_rank = dims.get_mesh("dp").get_local_rank()
    valid_size = cfg.eval_batches * cfg.batch.global_batch
    data = build_data(cfg.data, seq, samples_needed(index_steps(cfg), cfg.batch, seq), valid_size, cache_dir=index_cache(out))
    ckpt_root = os.path.join(out, "checkpoints")
    step, tokens_seen, cursor = 0, 0, Cursor.start(data.train)
    source = checkpoint.resume_source(ckpt_root, cfg.checkpoint.load, cfg.checkpoint.resume)
    tok_sha = tokenizer_sha256(cfg.data.prefixes)
    data_fps = data_fingerprints(cfg.data.prefixes)
    if source:
        check_checkpoint_optimizer(checkpoint.read_meta(source), source, cfg.optim)
        meta = checkpoint.load(source, pm.parts, optims, margs, tok_sha)
        step, tokens_seen, cursor = resume_state(meta, source)
        if rank == 0:
            print(f"resuming from step {step} ({source})", flush=True)
    if rank == 0:  # saves a kill or crash interrupted: never loaded, and not left to pile up
        for gone in clear_unfinished(ckpt_root):
            print(f"removed {gone}: an unfinished checkpoint (no {checkpoint.META}; its save was interrupted)", flush=True)
    logger = MetricsLogger(out, cfg.tensorboard, enabled=rank == 0, wandb=cfg.wandb)
    logger.truncate_after(step)
    fpt = flops_per_token(margs, seq, attention_share(pm.masking, data.train, device, margs.dropout))
    f8_share = float8_share(margs, seq) if cfg.parallel.float8 else 0.0
    peak = training_peak(device, cfg.parallel.mixed_precision, cfg.peak_tflops, f8_share)
    if rank == 0:
        info = {"parameters": num_params(pm.parts[0]) if dims.pp == 1 else None, "layout": dims.describe(),
                "peak_tflops": peak.tflops, "peak_source": peak.origin, "resumed_from": source}
        with open(os.path.join(out, "run.json"), "w") as f:
            json.dump(versioned({"config": cfg.model_dump(mode="json"), **info}), f, indent=1)
        logger.begin({"config": cfg.model_dump(mode="json"), **info}, step)  # W&B, when train.wandb.enabled
    stop = _Stop()
    last: dict[str, Any] = {}
    evals = InRunEval(cfg, pm.parts[0], margs, device, dims.tp, rank, world) if enabled(cfg) else None
    tokenizer = _copy_tokenizer(cfg, out) if rank == 0 else None
    saver = AsyncCheckpointer(device) if cfg.checkpoint.async_ else None

    def save() -> None:
        meta = {"tokens_seen": tokens_seen, "cursor": cursor.to_dict(), "config": cfg.model_dump(mode="json"),
                "layout": dims.describe(), "model_args": dataclasses.asdict(margs), "seq_len": seq,
                "tokenizer": tokenizer, "tokenizer_sha256": tok_sha, "data_fingerprints": data_fps}
        # in the background with checkpoint.async: it waits for the save before it, and for the copy off the device
        (saver.save if saver else checkpoint.save)(ckpt_root, step, pm.parts, optims, meta, cfg.checkpoint.keep)

    while step < cfg.steps:
        t0 = time.perf_counter()
        batch = batch_at(tokens_seen, cfg.batch)
        lr = lr_at(step, cfg.optim, cfg.steps)
        set_lr(optims, lr, cfg.optim)
        for o in optims:
            o.zero_grad(set_to_none=True)
        rows, cursor = take(data.train, cursor, batch)
        check_token_ids(rows, margs.vocab_size, cfg.data.prefixes)
        local = rank_share(rows, dp_rank, dp_size)
        loss_t = _forward_backward(pm, local, cfg, dims.pp > 1, device)
        norm_t = pm.clip_grad_norm(cfg.optim.grad_clip)
        for o in optims:
            o.step()
        pm.after_optimizer_step()  # float8 all-gather: the new weights' scales
        # the step's one wait for the device: loss and norm read together, after the optimizer's
        # kernels are queued (the step's time is then the device's, not the host's launch time)
        loss, grad_norm = torch.stack([loss_t.float(), norm_t.float()]).tolist()
        step += 1
        tokens_seen += batch * seq
        dt = time.perf_counter() - t0
        tps = batch * seq / dt
        tflops = fpt * tps / world / 1e12
        last = {"step": step, "loss": loss, "lr": lr, "grad_norm": grad_norm, "batch": batch,
                "tokens": tokens_seen, "tokens_per_s": tps, "tflops_per_device": tflops,
                "step_time_s": dt, "peak_memory_gib": _peak_memory(device, memory_before)}
        if peak.tflops:  # MFU only against a bound (selene.train.peak)
            last |= {"mfu": tflops / peak.tflops, "peak_tflops": peak.tflops}
        if data.valid is not None and (step % cfg.eval_every == 0 or step == cfg.steps):
            last["val_loss"] = _validate(pm, data.valid, cfg, dp_rank, dp_size, device, margs.vocab_size)
        if evals is not None and evals.due(step):  # harness tasks on the sharded model, every rank
            t_eval = time.perf_counter()
            last |= evals(step)
            last["eval_time_s"] = time.perf_counter() - t_eval
        if step % cfg.log_every == 0 or step == cfg.steps or "val_loss" in last or "eval_time_s" in last:
            logger.log(last)
        stopping = _any(stop.requested, world)
        if step % cfg.checkpoint.every == 0 or step == cfg.steps or stopping:
            save()
        if stopping:
            break
    if saver:  # the run's last checkpoint is complete before it reports success or exits on SIGTERM
        saver.close()
    logger.close()
    if evals is not None:
        evals.close()
    return last


def _copy_tokenizer(cfg: TrainConfig, out: str) -> str | None:
    """The tokenizer of the training data, copied next to the checkpoints so that a checkpoint
    directory is self-contained for evaluation and export (``../../tokenizer.model``, ``.json`` or ``.tiktoken``)."""
    src = tokenizer_file(cfg.data.prefixes)
    if src is None:
        return None
    name = os.path.basename(src)
    shutil.copyfile(src, os.path.join(out, name))
    sidecar = src + ".json"  # a tiktoken encoding's pattern and special tokens (tokenizer.tiktoken.json)
    if os.path.exists(sidecar):
        shutil.copyfile(sidecar, os.path.join(out, name + ".json"))
    return f"../../{name}"


def resume_state(meta: dict[str, Any], source: str) -> tuple[int, int, Cursor]:
    """(step, tokens seen, data cursor) of a checkpoint's meta; `InputError` naming its meta.json."""
    where = os.path.join(source, checkpoint.META)
    tokens = meta.get("tokens_seen")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise InputError(f"{where}: 'tokens_seen' is {tokens!r}, not a token count; the checkpoint is damaged")
    if not isinstance(meta.get("cursor"), dict):
        raise InputError(f"{where}: no data 'cursor' object; the checkpoint is damaged")
    try:
        cursor = Cursor.from_dict(meta["cursor"])
    except InputError as e:
        raise InputError(f"{where}: {e}; the checkpoint is damaged") from None
    return int(meta["step"]), tokens, cursor


def _forward_backward(pm: Any, local: Any, cfg: TrainConfig, pipelined: bool, device: torch.device) -> torch.Tensor:
    """Loss of this step (mean over the global batch, a device tensor), gradients accumulated and averaged."""
    if pipelined:  # the schedule splits the batch into its micro-batches itself
        return pm.forward_backward(*to_inputs(local, device))
    micro = cfg.batch.micro_batch
    if len(local) % micro:
        raise ConfigError(f"per-rank batch {len(local)} is not divisible by train.batch.micro_batch {micro}")
    chunks = [local[i : i + micro] for i in range(0, len(local), micro)]
    losses = [pm.forward_backward(*to_inputs(c, device)) for c in chunks]
    if len(chunks) > 1:
        for part in pm.parts:
            for p in part.parameters():
                if p.grad is not None:
                    p.grad.div_(len(chunks))
    return torch.stack(losses).mean()


@torch.no_grad()
def _validate(
    pm: Any, valid: Any, cfg: TrainConfig, dp_rank: int, dp_size: int, device: torch.device, vocab_size: int
) -> float:
    """Mean loss over the first `eval_batches` global batches of the held-out split (the same each time).

    Without pipelining a rank's share runs in micro-batches, as training does: one forward of the
    whole share would be a shape the compiled blocks have not seen (a recompile) and a memory peak
    training never reaches. The pipeline's schedule splits its share itself."""
    cursor = Cursor.start(valid)
    total = 0.0
    for _ in range(cfg.eval_batches):
        rows, cursor = take(valid, cursor, cfg.batch.global_batch)
        check_token_ids(rows, vocab_size, cfg.data.prefixes)
        share = rank_share(rows, dp_rank, dp_size)
        step = len(share) if pm.pipeline is not None else cfg.batch.micro_batch
        parts = [share[i : i + step] for i in range(0, len(share), step)]
        total += sum(pm.evaluate(*to_inputs(p, device)) for p in parts) / len(parts)
    return total / cfg.eval_batches


def _any(flag: bool, world: int) -> bool:
    """True on every rank when any rank got the signal (they must stop at the same step); one rank
    needs no collective (and no device round trip)."""
    if world == 1:
        return flag
    t = torch.tensor([int(flag)])
    if dist.is_initialized() and dist.get_backend() == "gloo":
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    elif dist.is_initialized():
        t = t.cuda()
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


def _peak_memory(device: torch.device, baseline: float) -> float:
    """GiB at the high-water mark: on CUDA what the allocator handed out; on CPU the growth of the
    process's peak resident set over `baseline` (what the model, optimizer, data and activations took)."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20 - baseline
