"""Document masking: each document of a packed sample is computed as if it were alone.

fp32 on CPU (the dense SDPA reference mask): the logits of every document of a packed sample equal the
model's on that document alone, the sample's loss is the token-weighted sum of the documents' losses,
and the same holds under TP 2 (with sequence parallelism), FSDP 2 and PP 2 on gloo.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
import yaml

from selene.model.args import PRESETS, ModelArgs
from selene.model.masks import (
    DocumentMasking,
    dense_mask,
    document_ids,
    document_positions,
    executed_attention_fraction,
)
from selene.model.transformer import Transformer
from selene.train.config import ParallelConfig
from selene.train.dims import ParallelDims
from selene.train.flops import flops_per_token
from selene.train.parallelize import build_parallel_model
from tests.distributed import run_world
from tests.pipeline_runs import subprocess_env

EOD = 3  # the end-of-document id of these samples
VOCAB = 96


def _model(args: ModelArgs, seed: int = 5) -> Transformer:
    with torch.device("meta"):
        model = Transformer(args)
    model.to_empty(device="cpu")
    model.init_weights(seed=seed)
    return model.eval()


def _packed(batch: int = 4, seq: int = 32, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Packed samples (inputs, labels shifted by one) with EODs inside: documents of 1 to ~20 tokens,
    one cut by the sample's start and one by its end, and a row with no EOD at all."""
    gen = torch.Generator().manual_seed(seed)
    rows = torch.randint(EOD + 1, VOCAB, (batch, seq + 1), generator=gen)
    ends = {0: [4, 5, 17, 30], 1: [0, 12], 2: [seq - 1], 3: []}
    for r, cols in ends.items():
        rows[r % batch, cols] = EOD
    return rows[:, :-1].contiguous(), rows[:, 1:].contiguous()


def _documents(tokens: torch.Tensor) -> list[tuple[int, torch.Tensor]]:
    """(row, columns) of every document of every row."""
    ids = document_ids(tokens, EOD)
    return [(b, (ids[b] == d).nonzero().flatten()) for b in range(len(tokens)) for d in ids[b].unique()]


def _per_document_loss(model: Transformer, tokens: torch.Tensor, labels: torch.Tensor) -> float:
    """Each document alone through the plain model: its summed cross-entropy, over all tokens."""
    total = torch.zeros((), dtype=torch.float64)
    with torch.no_grad():
        for b, cols in _documents(tokens):
            logits = model(tokens[b : b + 1, cols])[0]
            total += F.cross_entropy(logits, labels[b, cols], reduction="sum").double()
    return float(total / labels.numel())


def test_document_ids_and_positions() -> None:
    tokens = torch.tensor([[5, EOD, 6, 7, EOD, EOD, 8], [EOD, 9, 9, 9, 9, 9, 9]])
    ids = document_ids(tokens, EOD)
    assert ids.tolist() == [[0, 0, 1, 1, 1, 2, 3], [0, 1, 1, 1, 1, 1, 1]]
    assert document_positions(ids).tolist() == [[0, 1, 0, 1, 2, 0, 0], [0, 0, 1, 2, 3, 4, 5]]
    mask = dense_mask(ids)[0, 0]
    assert mask[3].tolist() == [False, False, True, True, False, False, False]
    assert mask[6].tolist() == [False] * 6 + [True]


@pytest.mark.parametrize(
    ("preset", "positions", "reset"),
    [("debug", "rope", False), ("debug-gqa", "rope", True), ("debug", "learned", True)],
)
def test_each_document_sees_only_itself(preset: str, positions: str, reset: bool) -> None:
    """RoPE is relative, so a document at any offset matches itself alone with or without reset
    positions; learned positions need them reset."""
    args = dataclasses.replace(PRESETS[preset], vocab_size=VOCAB, positions=positions)
    model = _model(args)
    tokens, _ = _packed()
    with torch.no_grad():
        packed = model(tokens, **DocumentMasking(EOD, reset).inputs(tokens))
        causal = model(tokens)
        for b, cols in _documents(tokens):
            alone = model(tokens[b : b + 1, cols])[0]
            torch.testing.assert_close(packed[b, cols], alone, rtol=0, atol=1e-5)
    # the mask changes what the causal model computes after the first document of a row
    assert (packed - causal).abs().max() > 1e-3


def test_packed_loss_is_the_token_weighted_sum_of_document_losses() -> None:
    model = _model(dataclasses.replace(PRESETS["debug"], vocab_size=VOCAB))
    tokens, labels = _packed()
    with torch.no_grad():
        loss = model(tokens, labels, documents=document_ids(tokens, EOD))
    assert abs(float(loss) - _per_document_loss(model, tokens, labels)) < 1e-5


def test_compiled_blocks_keep_the_mask() -> None:
    """The blocks compiled (the graph and its autograd, without a C++ toolchain) under the mask."""
    args = dataclasses.replace(PRESETS["debug"], vocab_size=VOCAB)
    model = _model(args)
    tokens, labels = _packed(batch=2)
    inputs = DocumentMasking(EOD, True).inputs(tokens)
    eager = model(tokens, labels, **inputs)
    for block in model.layers.values():
        block.compile(backend="aot_eager")
    compiled = model(tokens, labels, **inputs)
    torch.testing.assert_close(compiled, eager, rtol=0, atol=1e-5)
    compiled.backward()


def test_generation_refuses_mask_inputs_with_a_cache() -> None:
    from selene.errors import InputError
    from selene.model.cache import KVCache

    model = _model(dataclasses.replace(PRESETS["debug"], vocab_size=VOCAB))
    tokens, _ = _packed(batch=1)
    with pytest.raises(InputError, match="not of generation"):
        model(tokens, cache=KVCache(), documents=document_ids(tokens, EOD))


def test_executed_fraction_counts_the_blocks_a_block_mask_keeps() -> None:
    causal = torch.zeros(2, 512, dtype=torch.int32)  # one document: every causal block
    assert executed_attention_fraction(causal) == 1.0
    short = torch.arange(512).div(128, rounding_mode="floor").expand(2, -1)  # a document per block
    assert executed_attention_fraction(short) == 4 / 10
    args = dataclasses.replace(PRESETS["125m"], vocab_size=50304)
    assert flops_per_token(args, 2048, 0.4) < flops_per_token(args, 2048)


def test_a_run_counts_the_attention_its_samples_leave() -> None:
    """The loop's FLOPs: measured on the run's samples where FlexAttention runs, else causal's count."""
    from selene.train.data import attention_share

    samples = [np.append(np.tile([*[9] * 127, EOD], 4), 9) for _ in range(3)]  # 513 tokens: one per block
    masking = DocumentMasking(EOD)
    cuda, cpu = torch.device("cuda"), torch.device("cpu")  # the device is only asked its type
    assert attention_share(masking, samples, cuda, dropout=0.0) == 4 / 10
    assert attention_share(masking, samples, cpu, dropout=0.0) == 1.0
    assert attention_share(masking, samples, cuda, dropout=0.1) == 1.0
    assert attention_share(None, samples, cuda, dropout=0.0) == 1.0


# ------------------------------------------------------------------ TP 2, FSDP 2, PP 2 on gloo

# grouped-query attention (2 key/value heads: one per tensor-parallel rank), RoPE; and learned
# positions, whose per-row (reset) positions tensor parallelism cuts on the sequence
MODELS = {
    "gqa": dataclasses.replace(PRESETS["debug-gqa"], vocab_size=VOCAB),
    "learned": dataclasses.replace(PRESETS["debug"], vocab_size=VOCAB, positions="learned"),
}
LAYOUTS = {
    "tp2": ("gqa", ParallelConfig(dp_shard=1, tp=2)),
    "fsdp2": ("gqa", ParallelConfig(dp_shard=2)),
    "pp2": ("gqa", ParallelConfig(dp_shard=1, pp=2, pp_microbatches=2)),
    # two stages a rank: the ids reach stages of either rank, in the interleaved order
    "pp2-interleaved": (
        "gqa",
        ParallelConfig(
            dp_shard=1, pp=2, pp_microbatches=2, pp_schedule="interleaved_1f1b", pp_stages_per_rank=2
        ),
    ),
    "tp2-learned": ("learned", ParallelConfig(dp_shard=1, tp=2)),
}


def _masked_layouts(rank: int, world: int) -> dict[str, tuple[float, float, float]]:
    """Per layout: the masked eval loss, the masked training loss and the gradient norm."""
    tokens, labels = _packed()
    out = {}
    for name, (model, pcfg) in LAYOUTS.items():
        dims = ParallelDims(pcfg.dp_replicate, pcfg.dp_shard, pcfg.tp, pcfg.pp, world)
        pm = build_parallel_model(MODELS[model], pcfg, dims, dims.build_mesh("cpu"), torch.device("cpu"), 5)
        pm.masking = DocumentMasking(EOD, reset_positions=True)
        share = len(tokens) // dims.dp
        rows = slice(
            dims.get_mesh("dp").get_local_rank() * share, (dims.get_mesh("dp").get_local_rank() + 1) * share
        )
        evaluated = pm.evaluate(tokens[rows], labels[rows])
        trained = float(pm.forward_backward(tokens[rows], labels[rows]))
        out[name] = (evaluated, trained, float(pm.clip_grad_norm(1e9)))
    return out


def _single_process(args: ModelArgs) -> tuple[float, float]:
    """The per-document loss of the plain model and its gradient norm under the mask."""
    model = _model(args)
    tokens, labels = _packed()
    expected = _per_document_loss(model, tokens, labels)
    model.train()
    loss = model(tokens, labels, **DocumentMasking(EOD, reset_positions=True).inputs(tokens))
    loss.backward()
    assert abs(loss.item() - expected) < 1e-5
    return expected, float(
        torch.nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None])
    )


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_layouts_mask_like_one_process() -> None:
    single = {name: _single_process(args) for name, args in MODELS.items()}
    for rank, result in enumerate(run_world(2, _masked_layouts)):
        for name, (evaluated, trained, grad_norm) in result.items():
            expected, norm = single[LAYOUTS[name][0]]
            assert abs(evaluated - expected) < 1e-5, (name, rank, evaluated, expected)
            assert abs(trained - expected) < 1e-5, (name, rank, trained, expected)
            assert abs(grad_norm - norm) < 1e-4 * norm, (name, rank, grad_norm, norm)


# ------------------------------------------------------------------ bad input: no EOD id to mask by


def test_document_mask_without_an_eod_id_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from selene.tokenize.indexed import IndexedWriter

    prefix = str(tmp_path / "foreign" / "data_text_document")  # token data made elsewhere: no manifest
    (tmp_path / "foreign").mkdir()
    with IndexedWriter(prefix, np.uint16) as w:
        for n in range(40):
            w.add_document(np.append(np.arange(4, 14 + n % 7), 1))
    out = tmp_path / "out"
    cfg = {"model": {"preset": "debug", "vocab_size": 64}, "parallel": {"dp_shard": 1}, "steps": 1,
           "batch": {"seq_len": 32, "global_batch": 2, "micro_batch": 2},
           "data": {"prefixes": [prefix], "document_mask": True}, "tensorboard": False, "out": str(out)}  # fmt: skip
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = subprocess_env(tmp_path, SELENE_PREFECT="off", SELENE_HOME=str(tmp_path / "home"))
    run = subprocess.run([sys.executable, "-m", "selene.cli", "train", str(path)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert "train.data.document_mask" in run.stderr and "train.data.eod_id" in run.stderr
    assert "Traceback" not in run.stderr
    assert not out.exists()


def test_the_planner_counts_the_blocks_packed_documents_leave(tmp_path: Path) -> None:
    from selene.model.document_blocks import share_of_documents
    from selene.plan.cost import Shape
    from selene.plan.planner import with_document_mask
    from selene.tokenize.indexed import IndexedWriter
    from selene.train.config import TrainDataConfig

    assert share_of_documents(np.full(10, 4096), 2048) == 1.0  # documents longer than a sample: causal
    assert share_of_documents(np.full(64, 128), 2048) == 16 / 136  # one document per block: the diagonal
    prefix = str(tmp_path / "data_text_document")
    with IndexedWriter(prefix, np.uint16) as w:
        for _ in range(64):
            w.add_document(np.append(np.full(127, 7), EOD))
    shape = Shape(layers=12, hidden=768, heads=12, ffn=2048, vocab=50304, seq=2048, mlp="swiglu")
    masked = with_document_mask(shape, TrainDataConfig(prefixes=[prefix], document_mask=True))
    assert masked.attention_share == 16 / 136
    assert masked.model_flops_per_token() < shape.model_flops_per_token()
    assert with_document_mask(shape, TrainDataConfig(prefixes=[prefix])) == shape


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_the_block_mask_path_matches_the_dense_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """FlexAttention's path (a BlockMask, grouped-query heads), run eagerly on CPU: what CUDA compiles."""
    from torch.nn.attention.flex_attention import flex_attention

    from selene.model import masks

    args = dataclasses.replace(PRESETS["debug-gqa"], vocab_size=VOCAB)
    model = _model(args)
    tokens, _ = _packed(seq=64)
    inputs = DocumentMasking(EOD, True).inputs(tokens)
    with torch.no_grad():
        dense = model(tokens, **inputs)
        monkeypatch.setattr(masks, "uses_flex", lambda device, dropout: True)
        monkeypatch.setattr(masks, "_flex", lambda: flex_attention)
        assert isinstance(masks.attention_mask(inputs["documents"]), masks.BlockMask)
        flex = model(tokens, **inputs)
    torch.testing.assert_close(flex, dense, rtol=0, atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_flex_attention_on_cuda_matches_each_document_alone() -> None:
    args = dataclasses.replace(PRESETS["debug-gqa"], vocab_size=VOCAB)
    model = _model(args).cuda()
    tokens, _ = (t.cuda() for t in _packed(seq=64))
    with torch.no_grad():
        packed = model(tokens, documents=document_ids(tokens, EOD))
        for b, cols in _documents(tokens):
            torch.testing.assert_close(packed[b, cols], model(tokens[b : b + 1, cols])[0], rtol=0, atol=1e-4)


@pytest.mark.slow  # a multi-process run: the full suite's, not the edit loop's
def test_a_masked_run_trains_through_the_launcher(tmp_path: Path) -> None:
    """`train.data.document_mask` end to end: preflight, the loop's mask inputs, validation, metrics."""
    from selene.train.config import TrainConfig
    from selene.train.launch import launch
    from selene.train.metrics import read_metrics
    from tests.pipeline_runs import write_token_dataset

    prefix = write_token_dataset(tmp_path / "tokens")  # its manifest's EOD id is 1
    out = tmp_path / "out"
    settings = {"model": {"preset": "debug"}, "parallel": {"dp_shard": 1}, "steps": 2, "eval_every": 2,
                "eval_batches": 1, "batch": {"seq_len": 64, "global_batch": 4, "micro_batch": 2},
                "data": {"prefixes": [prefix], "document_mask": True, "reset_positions": True},
                "checkpoint": {"every": 100}, "tensorboard": False, "out": str(out)}  # fmt: skip
    cfg = TrainConfig.model_validate(settings)
    assert launch(cfg, str(out), 1) == 0
    records = read_metrics(str(out / "metrics.jsonl"))
    assert [r["step"] for r in records] == [1, 2] and np.isfinite(records[-1]["val_loss"])
