"""FLOPs, memory and time of one training iteration of a decoder-only transformer under a parallel layout.

Notation (Narayanan et al. 2021, Korthikanti et al. 2022): L layers, h hidden, a heads, F FFN width,
V vocabulary, s sequence, b micro-batch, B global batch (sequences), t TP, p PP, d DP, v virtual
stages per PP rank, m = B / (d·b) micro-batches per pipeline per iteration.

FLOPs (`Shape.fwd_flops_layer`, per token): 2 × matmul weights of a layer (4h² attention, or
2h² + 2h·k·h/a with k < a key/value heads (grouped-query attention narrows K and V); 2hF GELU /
3hF SwiGLU MLP) + 4·s·h for QKᵀ and AV (full square, as Megatron counts; under a document mask run
block-sparse, times the share of causal attention's blocks executed, `Shape.attention_share`); the
output layer 2·h·V.
Training runs a forward and a backward of twice its cost (3×); recomputation adds a forward of every
layer (`full`) or of QKᵀ/softmax/AV only (`selective`, 4·s·h). "Model FLOPs" leave recomputation
out (MFU); "hardware FLOPs" count what is executed (Megatron's TFLOP/s per GPU). For the GPT shape
(F = 4h, GELU) with full recomputation this is Narayanan et al.'s 96·B·s·L·h²·(1 + s/6h + V/16Lh).

Memory per GPU (bytes): weights, gradients and Adam state as selene trains (fp32 master weights 4,
fp32 gradients 4, Adam moments 8 = 16 bytes per parameter, divided by d under ZeRO-2/3 sharding; plus
the bf16 working copy of the weights being computed: two layers under ZeRO-3 or replication, the
whole stage under ZeRO-2, which keeps weights gathered from forward to backward), and activations
per layer and micro-batch from Korthikanti et al. 2022 §4, generalised to any F, SwiGLU, GQA, no dropout
and flash attention (`Shape.act_bytes_layer`): their GPT block stores s·b·h·(34 + 5·a·s/h) bytes,
s·b·h·(10 + 24/t + 5·a·s/(h·t)) under TP, s·b·h·(34 + 5·a·s/h)/t with sequence parallelism, 34·s·b·h/t
with selective and 2·s·b·h/t with full recomputation (plus one layer's full set while recomputing).
The first pipeline stage holds p micro-batches in flight (1F1B), L·(1 + (p−1)/(p·v)) layers' worth
when interleaved; the last stage adds the fp32 logits 4·s·b·V/t, or without TP and PP, where selene
fuses the output layer with the loss, one chunk of them and the weight's fp32 gradient. Eager blocks
keep a little more than the count (`compiled` False). Gradients are made during backward as the
activations go, so without gradient accumulation or a pipeline the peak holds the larger of the two.

Time per iteration (`estimate`): the pipeline runs m micro-batches through its slowest stage plus
(p−1)/v micro-batch times of bubble. One micro-batch on a stage costs its hardware FLOPs at
peak × efficiency(work) (devices.py), plus TP communication (per layer two all-reduce equivalents
forward, two backward, two more when a full recomputation re-runs the forward; ring volume
2(t−1)/t · s·b·h·2 bytes at the NVLink bus bandwidth), plus PP point-to-point (s·b·h·2/t bytes per
chunk boundary, forward and backward, over the network when stages span nodes); every collective and
send also pays the device's fixed latency. ZeRO-3/2 all-gather the stage's bf16 weights each
micro-batch (twice or once, block by block), overlapped with its compute, the excess exposed. The
gradient reduction (fp32) is an all-reduce once per iteration when replicated, overlapped with the
last micro-batch's backward, and a reduce-scatter in every micro-batch's backward when sharded
(FSDP keeps its gradients sharded while it accumulates), the excess exposed. An overlapped collective
still costs `OVERLAP_COST` (10%) of the time it hides: its kernels share the SMs and memory with the
compute. On a device whose communication cannot overlap compute (CPU cores running gloo) all of it is
exposed. The breakdown gives each collective's whole time beside the part in the iteration.
The optimizer step is memory-bound: 30 bytes per local parameter at HBM bandwidth.
Float8 training (`Layout.float8`) is priced by the `float8_*` functions at the end.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from selene.errors import ConfigError
from selene.model.loss_chunks import chunk_rows
from selene.plan.devices import DeviceSpec

Recompute = Literal["none", "selective", "full"]
Sharding = Literal["replicate", "zero2", "zero3"]
GB = 1e9
# Of a device's memory, what a layout may plan to use: the rest goes to the CUDA context, NCCL
# buffers and allocator fragmentation.
USABLE_MEMORY = 0.9
STATE_BYTES = 16  # fp32 weights + fp32 gradients + Adam m and v
GRAD_BYTES = 4
# Activation bytes under bf16 autocast over the 16-bit count, per layer, by (device type, compiled?).
# CPU: 79.7 vs 41.5 bytes per s·b·h eager, 58.3 vs 32.1 compiled (selene's block, s 128, b 2, h 256,
# SwiGLU 688). CUDA, compiled: 1.095, 1.097 and 1.106 for 125m, 350m and 1.3b at 8 × 2048 tokens
# (one H200, torch 2.11: the measured peak less weights, optimizer state, autocast's weight copies
# and the fused loss's bytes, over the count; benchmarks/results/mfu-h200.json): inductor's CUDA
# kernels keep about what the count assumes, its CPU kernels keep more. CUDA eager is not measured:
# the CPU's figure stands for it.
AUTOCAST_ACTIVATIONS = {("cpu", False): 1.92, ("cpu", True): 1.82, ("cuda", False): 1.92, ("cuda", True): 1.10}
OPTIMIZER_TRAFFIC = 30  # bytes read and written per parameter by an AdamW step (fp32 state, bf16 copy)


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    seq: int
    mlp: Literal["gelu", "swiglu"] = "gelu"
    dropout: bool = False
    flash: bool = True  # fused attention: no s×s scores kept for backward
    tied: bool = False
    learned_positions: bool = False
    n_kv_heads: int | None = None  # key/value heads (grouped-query attention); None: one per head
    # attention work done, as a fraction of causal attention's: below 1 under a document mask that a
    # block-sparse kernel (FlexAttention) skips (`selene.model.document_blocks`)
    attention_share: float = 1.0

    @classmethod
    def from_model_args(cls, args: Any, vocab: int, seq: int | None = None, flash: bool = True) -> Shape:
        return cls(
            layers=args.n_layers,
            hidden=args.dim,
            heads=args.n_heads,
            ffn=args.ffn_dim,
            vocab=vocab,
            seq=seq or args.max_seq_len,
            mlp=args.mlp,
            dropout=args.dropout > 0,
            flash=flash,
            tied=args.tie_embeddings,
            learned_positions=args.positions == "learned",
            n_kv_heads=args.n_kv_heads,
        )

    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads or self.heads

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    # -- parameters
    @property
    def layer_matmul_params(self) -> int:
        attention = 2 * self.hidden**2 + 2 * self.hidden * self.kv_heads * self.head_dim  # wq, wo; wk, wv
        return attention + (3 if self.mlp == "swiglu" else 2) * self.hidden * self.ffn

    @property
    def layer_params(self) -> int:
        return self.layer_matmul_params + 4 * self.hidden  # + two norms (weight and bias)

    @property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden + (self.seq * self.hidden if self.learned_positions else 0)

    @property
    def output_params(self) -> int:
        return (0 if self.tied else self.vocab * self.hidden) + 2 * self.hidden

    @property
    def params(self) -> int:
        return self.layers * self.layer_params + self.embedding_params + self.output_params

    # -- FLOPs per token
    @property
    def fwd_flops_layer(self) -> float:
        return 2.0 * self.layer_matmul_params + 4.0 * self.seq * self.hidden * self.attention_share

    @property
    def fwd_flops_logits(self) -> float:
        return 2.0 * self.hidden * self.vocab

    def train_flops_layer(self, recompute: Recompute) -> float:
        attention = 4.0 * self.seq * self.hidden * self.attention_share
        extra = {"none": 0.0, "selective": attention, "full": self.fwd_flops_layer}[recompute]
        return 3.0 * self.fwd_flops_layer + extra

    def model_flops_per_token(self) -> float:
        return 3.0 * (self.layers * self.fwd_flops_layer + self.fwd_flops_logits)

    def hardware_flops_per_token(self, recompute: Recompute) -> float:
        return self.layers * self.train_flops_layer(recompute) + 3.0 * self.fwd_flops_logits

    # -- activations (bytes) of one layer for one micro-batch of b sequences
    def act_bytes_layer(self, b: int, t: int, sp: bool, recompute: Recompute, compiled: bool = True) -> float:
        """16-bit activations one layer keeps for backward. `compiled` False: eager PyTorch, which
        keeps more than the fused kernels the count assumes (measured on selene's block, fp32, CPU):
        SiLU's output beside its input (2·F/h) and the attention output twice, as SDPA's output and
        as the out-projection's reshaped input, plus one more s·b·h tensor (4 in all); compiled
        blocks keep exactly the count (64.3 vs 64.2 bytes per s·b·h in fp32, eager 83.1 vs 83.0)."""
        s, h, a = self.seq, self.hidden, self.heads
        sbh = s * b * h
        if recompute == "full":
            return 2.0 * sbh / (t if sp else 1)
        drop = 1.0 if self.dropout else 0.0
        # Not split by TP (split by SP): two norm inputs (4), QKV input (2), MLP input (2), two dropout masks.
        replicated = 8.0 + 2.0 * drop
        # Split by TP: Q (2), K and V (4, narrower by kv_heads / heads under GQA) and the attention
        # output (2); the MLP's intermediate tensors.
        ratio = self.ffn / h
        mlp = (6.0 if self.mlp == "swiglu" else 4.0) * ratio
        split = 4.0 + 4.0 * self.kv_heads / a + mlp
        if not compiled:
            split += 4.0 + (2.0 * ratio if self.mlp == "swiglu" else 0.0)
        scores = 0.0
        if not self.flash and recompute == "none":
            scores = (2.0 + 3.0 * drop) * a * s * s * b  # softmax output; with dropout its mask and output
        return sbh * (replicated / (t if sp else 1) + split / t) + scores / t

    def act_bytes_extra_first(self, b: int, t: int, sp: bool) -> float:
        return (1.0 if self.dropout else 0.0) * self.seq * b * self.hidden / (t if sp else 1)

    def act_bytes_extra_last(self, b: int, t: int, sp: bool) -> float:
        """The final norm's tensors (16-bit) and the fp32 logits of an unfused output layer + loss."""
        sbh = self.seq * b * self.hidden
        return 4.0 * sbh / (t if sp else 1) + 4.0 * self.seq * b * self.vocab / t

    def fused_loss_bytes(self, b: int, word: float, device_type: str) -> float:
        """Bytes of the output layer fused with the loss in chunks (`selene.model.loss`, no TP or PP),
        real bytes rather than 16-bit units: the final norm's input and output and the hidden
        states' gradient (`word` bytes each), the weight's gradient in fp32, and one chunk's logits
        at their peak, fp32 logits beside their fp32 log-probabilities (and, in 16 bits, the chunk's
        weight-gradient product)."""
        tokens = self.seq * b
        rows = chunk_rows(self.vocab, self.hidden, device_type, tokens)
        product = self.vocab * self.hidden * word if word < 4 else 0.0
        return 3.0 * word * tokens * self.hidden + 4.0 * self.vocab * self.hidden + 8.0 * rows * self.vocab + product


@dataclass(frozen=True)
class Layout:
    tp: int
    pp: int
    dp: int
    micro_batch: int = 1
    recompute: Recompute = "selective"
    sharding: Sharding = "zero3"
    virtual: int = 1  # virtual pipeline stages per rank (interleaved 1F1B when > 1)
    sequence_parallel: bool = True
    precision: Literal["bf16", "fp32"] = "bf16"  # of activations and the working copy of the weights
    compiled: bool = True  # blocks compiled (fused kernels keep fewer activations than eager PyTorch)
    float8: Literal["tensorwise", "rowwise"] | None = None  # the blocks' linears in float8 (float8_* below)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    def label(self) -> str:
        v = f"×v{self.virtual}" if self.virtual > 1 else ""
        f8 = f" float8-{self.float8}" if self.float8 else ""
        return f"TP{self.tp}·PP{self.pp}{v}·DP{self.dp} mb{self.micro_batch} {self.recompute} {self.sharding}{f8}"

    def config(self, microbatches: int = 1) -> dict[str, Any]:
        """The `train.parallel` section (and batch.micro_batch) that runs this layout in selene;
        `microbatches` per pipeline per iteration become `pp_microbatches`."""
        sharded = self.sharding != "replicate"
        pipeline = {"pp_microbatches": microbatches} if self.pp > 1 else {}
        return {
            "parallel": {
                "tp": self.tp,
                "pp": self.pp,
                "dp_shard": self.dp if sharded else 1,
                "dp_replicate": 1 if sharded else self.dp,
                "reshard_after_forward": self.sharding == "zero3",
                "recompute": self.recompute,
                "sequence_parallel": self.sequence_parallel,
                "pp_schedule": "interleaved_1f1b" if self.virtual > 1 else "1f1b",
                "pp_stages_per_rank": self.virtual,
                **pipeline,
                "mixed_precision": self.precision,
                "compile": self.compiled,
                **({"float8": self.float8} if self.float8 else {}),
            },
            "micro_batch": self.micro_batch,
        }


@dataclass
class Estimate:
    layout: Layout
    microbatches: int
    params_per_gpu: float
    memory: dict[str, float]  # GB per GPU, by part, and "total"
    fits: bool
    time: dict[str, float]  # seconds per iteration, by part, and "iteration"
    hardware_tflops: float  # per GPU, recomputation included (Megatron's convention)
    model_tflops: float  # per GPU, recomputation left out
    mfu: float
    efficiency: float  # of the layer kernels, from the device's curve
    notes: list[str] = field(default_factory=list)

    @property
    def iteration_s(self) -> float:
        return self.time["iteration"]

    def days(self, tokens: float, global_batch: int, seq: int) -> float:
        return tokens / (global_batch * seq) * self.iteration_s / 86400.0

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["layout"]["label"] = self.layout.label()
        d["config"] = self.layout.config(self.microbatches)
        return d


# An overlapped collective is not free: NCCL's kernels take SMs and memory bandwidth from the
# compute they run beside. This share of the hidden time is paid (a round figure from the
# 10-20% slow-down of GEMMs that overlapped NCCL traffic causes on A100/H100 in published
# measurements; not fitted here).
OVERLAP_COST = 0.1


def _exposed(comm: float, compute: float, overlap: bool) -> float:
    """Seconds a collective of `comm` s adds to `compute` s it runs beside: the excess, plus
    `OVERLAP_COST` of the part hidden; all of it where nothing overlaps (CPU cores running gloo)."""
    if not overlap:
        return comm
    return max(0.0, comm - compute) + OVERLAP_COST * min(comm, compute)


def _allreduce_s(nbytes: float, ranks: int, gbps: float) -> float:
    return 0.0 if ranks <= 1 else 2.0 * (ranks - 1) / ranks * nbytes / (gbps * GB)


def _gather_s(nbytes: float, ranks: int, gbps: float) -> float:
    """An all-gather or a reduce-scatter of `nbytes` (the full tensor) over `ranks`."""
    return 0.0 if ranks <= 1 else (ranks - 1) / ranks * nbytes / (gbps * GB)


def memory(shape: Shape, lay: Layout, global_batch: int, device_type: str = "cuda") -> tuple[dict[str, float], float]:
    """Peak memory per GPU by part (GB), and the parameters one GPU holds (the busiest stage).

    Gradients are made in backward (selene sets them to None between steps) as the activations they
    come from are freed, so with one micro-batch per step and no pipeline the peak holds the larger of
    the two, not both; gradient accumulation and pipelines keep the gradients across micro-batches."""
    t, p, d, b, v = lay.tp, lay.pp, lay.dp, lay.micro_batch, lay.virtual
    sp = lay.sequence_parallel and t > 1
    m = global_batch // (d * b)
    per_stage = math.ceil(shape.layers / p)
    first = per_stage * shape.layer_params + shape.embedding_params
    last = per_stage * shape.layer_params + shape.output_params
    if p == 1:
        first = last = first + shape.output_params
    local = max(first, last) / t
    shard = d if lay.sharding != "replicate" else 1
    states = (STATE_BYTES - GRAD_BYTES) * local / shard
    grads = GRAD_BYTES * local / shard
    if lay.precision == "fp32":
        working = 0.0 if shard == 1 else 4.0 * (local if lay.sharding == "zero2" else 2 * shape.layer_params / t)
    elif lay.sharding == "zero2":
        working = 2.0 * local
    else:
        working = 2.0 * 2 * shape.layer_params / t  # the layer computed and the one prefetched
    autocast = lay.precision == "bf16" and d == 1  # no data parallelism, so no FSDP: selene autocasts
    if autocast:
        # autocast's cached bf16 copy of every block weight, saved for backward (the embedding is a
        # lookup in fp32; the fused loss casts the output layer for its own duration only)
        working = 2.0 * per_stage * shape.layer_params / t
    elif lay.precision == "bf16":
        # FSDP's bf16 copy of the stage's embeddings and output layer (the root unit) lives through the
        # forward and the backward; in backward each unit's bf16 gradient and its fp32 copy for the
        # reduction (6 bytes a parameter) exist until it is reduced, the root's last of all
        ends = (shape.embedding_params + shape.output_params) if p == 1 else max(shape.embedding_params, shape.output_params)
        if lay.sharding != "zero2":  # ZeRO-2's working copy already holds the whole stage
            working += 2.0 * ends / t
        grads += 6.0 * max(ends, shape.layer_params) / t
    # the formulas count 16-bit activations; autocast keeps more (fp32 norms and residual stream, a bf16
    # copy of a norm's output per matmul reading it): measured on selene's block, eager and compiled
    factor = AUTOCAST_ACTIVATIONS[("cpu" if device_type == "cpu" else "cuda", lay.compiled)]
    scale = 2.0 if lay.precision == "fp32" else (factor if autocast else 1.0)
    per_layer = scale * shape.act_bytes_layer(b, t, sp, lay.recompute, lay.compiled)
    if p == 1:
        layers_in_flight = float(shape.layers)
        in_flight = 1.0
    elif v == 1:
        in_flight = float(min(p, m))
        layers_in_flight = per_stage * in_flight
    else:
        layers_in_flight = shape.layers * (1 + (p - 1) / (p * v))
        in_flight = layers_in_flight / per_stage
    fused_loss = t == 1 and p == 1  # selene fuses the output layer with the loss (no vocabulary-parallel logits)
    word = 4.0 if lay.precision == "fp32" else 2.0
    extra_last = (shape.fused_loss_bytes(b, word, device_type) if fused_loss
                  else scale * shape.act_bytes_extra_last(b, t, sp))
    acts_first = per_layer * layers_in_flight + scale * shape.act_bytes_extra_first(b, t, sp) * in_flight
    acts_last = per_layer * per_stage + extra_last
    if p == 1:
        acts_first += extra_last
    acts = max(acts_first, acts_last)
    if lay.recompute == "full":
        acts += scale * shape.act_bytes_layer(b, t, sp, "none", lay.compiled)  # one layer re-run in full
    parts = {
        "weights+optimizer": states / GB,
        "gradients": grads / GB,
        "working weights": working / GB,
        "activations": acts / GB,
    }
    accumulates = p > 1 or m > 1
    parts["total"] = (states + working + (grads + acts if accumulates else max(grads, acts))) / GB
    return parts, local


def estimate(
    shape: Shape, lay: Layout, global_batch: int, dev: DeviceSpec, tflops: float | None = None
) -> Estimate:
    """Memory and time of one iteration; with `tflops` (achieved hardware TFLOP/s per GPU) the time is
    the iteration's FLOPs at that rate instead of the modelled one."""
    t, p, d, b, v = lay.tp, lay.pp, lay.dp, lay.micro_batch, lay.virtual
    m = global_batch // (d * b)
    mem, local = memory(shape, lay, global_batch, "cpu" if dev.name == "cpu" else "cuda")
    peak = dev.peak_tflops * 1e12
    per_stage = math.ceil(shape.layers / p)
    tokens_mb = shape.seq * b

    # compute of one micro-batch on the slowest stage (the last: it also runs the output layer)
    w_layer = shape.train_flops_layer(lay.recompute) * tokens_mb / t
    w_logits = 3.0 * shape.fwd_flops_logits * tokens_mb / t
    eff = dev.efficiency(w_layer)
    compute_mb = (per_stage * w_layer / eff + w_logits / dev.efficiency(w_logits)) / peak
    if lay.float8:
        float8_check_device(dev, lay.float8)
        layer_s = float8_compute_s(shape, lay, dev, w_layer, eff, tokens_mb)
        compute_mb = per_stage * layer_s + w_logits / dev.efficiency(w_logits) / peak
    word = 4.0 if lay.precision == "fp32" else 2.0
    act_bytes = tokens_mb * shape.hidden * word
    intra = t <= dev.gpus_per_node
    tp_bw = dev.intra_node_gbps if intra else dev.inter_node_gbps
    alpha = dev.collective_latency_s
    tp_ops = per_stage * (4 + (2 if lay.recompute == "full" else 0)) + 1
    tp_mb = 0.0 if t == 1 else tp_ops * (_allreduce_s(act_bytes, t, tp_bw) + alpha)
    pp_bw = dev.inter_node_gbps if t * d >= dev.gpus_per_node else dev.intra_node_gbps
    pp_mb = 0.0 if p == 1 else 2 * v * (act_bytes / (t if lay.sequence_parallel else 1) / (pp_bw * GB) + alpha)
    dp_bw = dev.inter_node_gbps if t * d > dev.gpus_per_node else dev.intra_node_gbps
    gathers = {"zero3": 2, "zero2": 1, "replicate": 0}[lay.sharding]
    blocks = per_stage + 1  # FSDP units: each block, and the rest of the stage
    gather = float8_gather_bytes(shape, lay, local, per_stage, word)
    gather_mb = 0.0 if d == 1 else gathers * (_gather_s(gather, d, dp_bw) + blocks * alpha)
    fsdp_mb = _exposed(gather_mb, compute_mb, dev.overlap)
    grads = 4.0 * local
    reduce = _allreduce_s(grads, d, dp_bw) if lay.sharding == "replicate" else _gather_s(grads, d, dp_bw)
    reduce += 0.0 if d == 1 else blocks * alpha
    # ZeRO-2/3 (FSDP) reduce-scatter the gradients in every micro-batch's backward (selene keeps
    # FSDP's gradient sync on while it accumulates: sharded gradients, not a full copy); replicated
    # data parallelism reduces once, in the last micro-batch's backward. Either hides under backward
    # (2/3 of a micro-batch's compute).
    per_mb_reduce = lay.sharding != "replicate"
    reduce_mb = _exposed(reduce, compute_mb * 2.0 / 3.0, dev.overlap) if per_mb_reduce else 0.0
    t_mb = compute_mb + tp_mb + pp_mb + fsdp_mb + reduce_mb
    pipeline = m * t_mb
    bubble = (p - 1) / v * t_mb
    dp_exposed = 0.0 if per_mb_reduce else _exposed(reduce, compute_mb * 2.0 / 3.0, dev.overlap)
    shard = d if lay.sharding != "replicate" else 1
    optimizer = OPTIMIZER_TRAFFIC * local / shard / (dev.hbm_gbps * GB)

    hw_flops_gpu = shape.hardware_flops_per_token(lay.recompute) * global_batch * shape.seq / lay.gpus
    model_flops_gpu = shape.model_flops_per_token() * global_batch * shape.seq / lay.gpus
    notes: list[str] = []
    if shape.attention_share < 1.0:
        notes.append(f"document mask: attention at {shape.attention_share:.0%} of causal attention's blocks")
    if lay.float8:
        peak = float8_mfu_peak(shape, dev) * 1e12
        notes.append(f"float8: linears at the fp8 peak x {dev.fp8_efficiency:g} of the efficiency curve (fit to "
                     f"torchtitan's Llama-3 8B +28% on H100); MFU against the fp8/bf16 bound, {peak / 1e12:.0f} TFLOP/s")
    if tflops:
        iteration = hw_flops_gpu / (tflops * 1e12)
        time = {"iteration": iteration, "given throughput": iteration}
        notes.append(f"time from the given throughput, {tflops:g} TFLOP/s per GPU")
    else:
        time = {
            "compute": m * compute_mb,
            "tp communication": m * tp_mb,
            "pp communication": m * pp_mb,
            "fsdp gathers (exposed)": m * fsdp_mb,
            "pipeline bubble": bubble,
            "dp gradient reduction (exposed)": m * reduce_mb + dp_exposed,
            "optimizer step": optimizer,
            # what the collectives take in all, overlapped or not (the exposed parts above are in the
            # iteration; these are not added again)
            "fsdp gathers (all)": m * gather_mb,
            "dp gradient reduction (all)": m * reduce if per_mb_reduce else (reduce if d > 1 else 0.0),
        }
        time["iteration"] = pipeline + bubble + dp_exposed + optimizer
    it = time["iteration"]
    fits = mem["total"] <= USABLE_MEMORY * dev.memory_gb
    if not intra:
        notes.append(f"TP {t} spans nodes ({dev.gpus_per_node} GPUs per node)")
    return Estimate(
        layout=lay,
        microbatches=m,
        params_per_gpu=local,
        memory=mem,
        fits=fits,
        time=time,
        hardware_tflops=hw_flops_gpu / it / 1e12,
        model_tflops=model_flops_gpu / it / 1e12,
        mfu=model_flops_gpu / it / peak,
        efficiency=eff,
        notes=notes,
    )


# ------------------------------------------------------------------------------------------ float8
# What float8 training (`train.parallel.float8`, `selene.train.float8`) changes in an iteration's cost.
#
# - Compute: the blocks' linears (their matmul FLOPs, forward, backward and a full recomputation's
#   forward) run at the device's dense fp8 peak, twice bf16's on H100/H200, at `fp8_efficiency` of the
#   device's efficiency curve (fit to torchtitan's published float8 speed-up, `selene.plan.devices`);
#   the attention core (QKᵀ, AV) and the output layer stay at the bf16 peak.
# - Casts: each float8 linear scales and casts its input and, in backward, its output gradient (an
#   absolute-max pass, then a read and a 1-byte write: 5 bytes per 16-bit element), memory-bound at HBM
#   bandwidth, added to the compute (a compiled block fuses some of it: an upper bound).
# - FSDP: tensorwise float8 all-gathers the linears' weights in 1 byte instead of the working
#   precision's 2 (or 4); rowwise gathers them as before.
# - MFU is against the same mixed bound the training run reports (`selene.train.peak.float8_peak`):
#   the float8 share of the model FLOPs at the fp8 peak, the rest at bf16's.

FLOAT8_CAST_BYTES = 5.0  # per 16-bit element cast: read for the absolute max, read again, write 1 byte


def float8_check_device(dev: DeviceSpec, recipe: str) -> None:
    if not dev.fp8_peak_tflops:
        raise ConfigError(
            f"float8 {recipe}: {dev.name} has no float8 tensor cores (compute capability < 8.9); "
            "plan it on h100 or h200, or without float8"
        )


def float8_linear_train_flops(shape: Shape, recompute: Recompute) -> float:
    """FLOPs per token of one layer's linears in a training step (forward, backward, recomputation)."""
    forward = 2.0 * shape.layer_matmul_params
    return forward * (4.0 if recompute == "full" else 3.0)


def float8_compute_s(
    shape: Shape, lay: Layout, dev: DeviceSpec, w_layer: float, eff: float, tokens_mb: int
) -> float:
    """Seconds of one layer's micro-batch work `w_layer` (FLOPs per GPU) under float8: the linears'
    share at the fp8 peak, the rest at bf16's, at efficiency `eff`; plus the casts' HBM traffic."""
    share = float8_linear_train_flops(shape, lay.recompute) / shape.train_flops_layer(lay.recompute)
    fp8_rate = dev.fp8_peak_tflops * 1e12 * dev.fp8_efficiency
    matmul = w_layer / eff * (share / fp8_rate + (1.0 - share) / (dev.peak_tflops * 1e12))
    return matmul + float8_cast_bytes(shape, lay, tokens_mb) / (dev.hbm_gbps * 1e9)


def float8_cast_bytes(shape: Shape, lay: Layout, tokens_mb: int) -> float:
    """HBM bytes one layer's float8 casts move per micro-batch on one GPU: each linear's input (in
    forward) and output gradient (in backward), and its weight once."""
    h, f = shape.hidden, shape.ffn
    kv = shape.kv_heads * shape.head_dim
    mlp_in = 3 if shape.mlp == "swiglu" else 2  # w1, (w3): h → F; w2: F → h
    edges = (h + h) + 2 * (h + kv) + (h + h) + (mlp_in - 1) * (h + f) + (f + h)
    per_pass = 2 if lay.recompute == "full" else 1  # a recomputed forward casts its inputs again
    acts = tokens_mb * edges * per_pass
    return FLOAT8_CAST_BYTES * (acts + shape.layer_matmul_params) / lay.tp


def float8_gather_bytes(shape: Shape, lay: Layout, local: float, per_stage: int, word: float) -> float:
    """Bytes of one FSDP all-gather of the stage's `local` parameters: tensorwise float8 gathers the
    blocks' linears in 1 byte, everything else in the working precision's `word`."""
    if lay.float8 != "tensorwise":
        return word * local
    linears = per_stage * shape.layer_matmul_params / lay.tp
    return word * (local - linears) + 1.0 * linears


def float8_mfu_peak(shape: Shape, dev: DeviceSpec) -> float:
    """TFLOP/s that MFU divides by under float8: 1 / (s/fp8 + (1 − s)/bf16), s the float8 share."""
    share = shape.layers * 3.0 * 2.0 * shape.layer_matmul_params / shape.model_flops_per_token()
    return 1.0 / (share / dev.fp8_peak_tflops + (1.0 - share) / dev.peak_tflops)
