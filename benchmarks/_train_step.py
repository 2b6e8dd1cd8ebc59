"""selene's training step on one device, built by the trainer's own code, for the training benchmarks.

`SeleneStep` is what `selene train` runs per step with one process: `build_parallel_model` (autocast
for bf16, compiled blocks, recomputation as configured), the trainer's AdamW (`build_optimizers`),
`ParallelModel.forward_backward` and `clip_grad_norm`. `HFStep` is the same step as a Hugging Face
user runs it: `LlamaForCausalLM` (SDPA attention) with the same weights, its own loss, and what
`transformers.Trainer` does by default (torch's fused AdamW on torch >= 2.8, clipping at 1.0,
`torch.autocast` for bf16).
"""

from __future__ import annotations

import contextlib
import gc
import sys
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selene.model.args import ModelArgs  # noqa: E402
from selene.train.args import model_args  # noqa: E402
from selene.train.config import TrainConfig  # noqa: E402
from selene.train.dims import ParallelDims  # noqa: E402
from selene.train.loop import build_optimizers, init_distributed  # noqa: E402
from selene.train.parallel_model import ParallelModel  # noqa: E402
from selene.train.parallelize import build_parallel_model  # noqa: E402


def device_here() -> torch.device:
    return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_config(preset: str, seq: int, vocab: int, precision: str, compile: bool, recompute: str = "none",
                 **model: Any) -> TrainConfig:
    """A one-process training config: the preset at `seq` tokens, nothing parallel."""
    return TrainConfig.model_validate({
        "model": {"preset": preset, "max_seq_len": seq, "vocab_size": vocab, **model},
        "parallel": {"dp_shard": 1, "mixed_precision": precision, "compile": compile, "recompute": recompute},
    })


class SeleneStep:
    """Forward, backward, clipping and AdamW of selene's trainer, one process."""

    def __init__(self, cfg: TrainConfig, device: torch.device, seed: int = 0) -> None:
        init_distributed("nccl" if device.type == "cuda" else "gloo")
        self.cfg, self.device = cfg, device
        self.margs: ModelArgs = model_args(cfg.model, cfg.model.vocab_size or 0)
        dims = ParallelDims(1, 1, 1, 1, 1)
        self.pm: ParallelModel = build_parallel_model(
            self.margs, cfg.parallel, dims, dims.build_mesh(device.type), device, seed
        )
        self.optims = build_optimizers(self.pm.parts, cfg)

    @property
    def model(self) -> torch.nn.Module:
        return self.pm.parts[0]

    def __call__(self, x: torch.Tensor, y: torch.Tensor) -> float:
        for o in self.optims:
            o.zero_grad(set_to_none=True)
        loss = self.pm.forward_backward(x, y)
        self.pm.clip_grad_norm(self.cfg.optim.grad_clip)
        for o in self.optims:
            o.step()
        return float(loss)  # a sync, as the trainer's logging makes

    def close(self) -> None:
        del self.pm, self.optims
        release(self.device)


class HFStep:
    """`LlamaForCausalLM` with selene's weights, trained the way `transformers.Trainer` does by default."""

    def __init__(self, selene: SeleneStep, compile: bool = False) -> None:
        from transformers import LlamaForCausalLM

        from selene.eval.export import hf_config, hf_state_dict

        cfg, margs = selene.cfg, selene.margs
        config = hf_config(margs)
        config._attn_implementation = "sdpa"
        with torch.device(selene.device):
            self.model = LlamaForCausalLM(config)
        state = {k: v.to(selene.device) for k, v in hf_state_dict(selene.model, margs).items()}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if unexpected or [k for k in missing if "rotary" not in k]:
            raise RuntimeError(f"HF model does not take selene's weights: missing {missing}, unexpected {unexpected}")
        self.model.train()
        # torch.compile of the whole model, as a user passes `torch_compile=True` to the Trainer
        self.forward = torch.compile(self.model) if compile else self.model
        self.device, self.clip = selene.device, cfg.optim.grad_clip
        self.bf16 = cfg.parallel.mixed_precision == "bf16"
        o = cfg.optim
        self.optim = torch.optim.AdamW(
            self.model.parameters(), lr=o.lr, betas=(o.beta1, o.beta2), eps=o.eps, weight_decay=o.weight_decay,
            fused=True,
        )

    def __call__(self, x: torch.Tensor, y: torch.Tensor) -> float:
        self.optim.zero_grad(set_to_none=True)
        amp = torch.autocast(self.device.type, dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()
        with amp:
            # labels=x only switches the loss on; shift_labels are the next tokens, as selene's labels
            loss = self.forward(input_ids=x, labels=x, shift_labels=y).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.optim.step()
        return float(loss.detach())

    def close(self) -> None:
        del self.model, self.forward, self.optim
        release(self.device)


def release(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def batch(vocab: int, b: int, seq: int, device: torch.device, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    toks = torch.randint(0, vocab, (b, seq + 1), generator=g).to(device)
    return toks[:, :-1].contiguous(), toks[:, 1:].contiguous()
