"""The serving cost model of `selene plan serve`: memory and time of one layout (TP × PP × batch).

Memory per GPU (GB, 1e9 bytes), for TP t, PP p and `batch` concurrent sequences per replica:
  weights      params × weight bytes / (t·p)
  KV cache     2 · layers · kv_heads · head_dim · kv bytes per token of a sequence, × (prompt + output)
               × batch, split by TP across the kv heads (replicated when t > kv_heads) and by PP
               across the layers (the busiest stage: ⌈layers/p⌉)
  activations  one layer's transient tensors for one prefill chunk (`PREFILL_CHUNK_TOKENS`: engines
               such as vLLM and TensorRT-LLM prefill in chunks of a few thousand tokens) plus the fp32
               logits of the batch's last tokens; nothing is kept across layers at inference
               (with length files: the mean prompt + output, as a paged KV cache holds them)
  reserve      `RESERVE_FRACTION` (10%) of the device: CUDA context, NCCL buffers, CUDA graphs and
               allocator fragmentation; the same 90% the training planner plans in, and vLLM's default
               gpu_memory_utilization 0.9
  free         what is left (negative: does not fit)

Time (seconds), per replica:
  prefill  compute-bound: on a GPU, each chunk's GEMMs (QKV, output, MLP up and down of the stage's
           layers, split by TP) at the device's matmul efficiency times the share of the SMs their
           output tiles fill (`_Layout.gemm_s`), or the stage's weights read once from HBM if that is
           slower (a short prompt); causal attention (2 · layers · hidden · prompt² · batch FLOPs) at
           the same rate; the LM head on the batch's last tokens. With a calibration (the CPU of a
           serving study): 2 · matmul parameters · prompt · batch FLOPs plus attention at peak × the
           calibrated curve at one layer's work per chunk, or `prefill_efficiency`. Plus two TP
           all-reduces per layer per chunk and a PP hand-off per stage boundary. With PP the chunks
           flow through the stages: (chunks + p − 1) stage slots, so one short prompt pays every
           stage serially and a long batch of chunks overlaps them.
           TTFT = prefill of the batch's prompts arriving together (the last sequence's first token,
           the worst case of a static batch); ``ttft_one_ms`` is one prompt alone.
  decode   one step makes one token for each of the batch's sequences; per stage it costs its
           kernels one after another, each at the slower of its reads and its FLOPs: the GEMMs
           (max(the weights over HBM bandwidth × `DECODE_HBM_EFFICIENCY`, their FLOPs for the batch's
           rows priced as prefill's GEMMs: matmul efficiency × the SMs their tiles fill) plus
           attention (max(the KV cache read at the mean context prompt + output/2 over the same
           bandwidth, its 4 · context · hidden · layers FLOPs per token)); one roofline over the whole
           step would hide the KV read under the GEMMs' compute at a large batch. A calibrated
           CPU prices the FLOPs at its fitted `decode_compute_efficiency` (its GEMMs are not tiles), and
           adds memory and compute times (`decode_overlap` false). Plus two TP all-reduces per layer
           (message batch · hidden · 2 bytes; ring: 2(t−1) steps of the NVLink hop latency +
           2(t−1)/t · message over the NCCL bus bandwidth) — on the critical path, not overlapped.
           PP, two ways, the faster taken: a single stream (the whole batch one micro-batch, every
           stage paid serially: p · stage(batch) + (p − 1) hand-offs) or a full pipeline (the batch cut
           into m = min(p, batch) micro-batches kept in flight, every stage busy: a token every
           p · (stage(batch/m) + hand-off)). When weights dominate a stage both are equal (each
           micro-batch re-reads the stage's weights); when KV reads or compute dominate the pipeline
           wins.
           ITL = one decode step; tokens/s total = replicas × batch / ITL; per GPU = total / GPUs.
  fixed    a cost per layer per forward on every prefill chunk and decode step, and one per forward
           (`fixed_costs`): on a GPU its kernel launches (KERNELS_PER_LAYER and KERNELS_PER_FORWARD
           kernels at the device's launch latency, ~5 µs: an engine without CUDA graphs); with a
           calibration that measured them (`selene.plan.serve_study`), the measured ones.
Not modelled: queueing, prefill interleaved with decode (continuous batching's stall of the decode
steps), speculative decoding, paged-KV waste.
fp8/int8 weights and KV halve their bytes (memory and HBM time); compute stays at the bf16 peak.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

from selene.errors import ConfigError
from selene.plan.cost import GB, USABLE_MEMORY, Shape
from selene.plan.devices import DeviceSpec
from selene.plan.planner import shape_from_preset as planner_shape

DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
ACT_BYTES = 2.0  # activations and all-reduce messages are bf16
RESERVE_FRACTION = 1.0 - USABLE_MEMORY  # 10% of the device, see the module docstring
# Fraction of peak HBM bandwidth that decode's memory-bound GEMV and attention kernels reach: ~80-90%
# is what a STREAM-like copy reaches on A100/H100; 0.8 leaves some for the smaller kernels.
DECODE_HBM_EFFICIENCY = 0.8
# GPU GEMMs (`_Layout.gemm_s`), which price prefill: each runs at the device's best-shaped matmul rate
# (`DeviceSpec.matmul_efficiency`: 0.86 of the dense peak on A100, 0.80 on H100, measured figures
# from outside this project, not fitted to any serving point) times the share of the SMs its output
# tiles fill. A GEMM is computed in output tiles of 128 × 128, one per streaming multiprocessor at a
# time: a GEMM of few tiles (a short prompt, a wide TP split) leaves SMs idle, and its last wave of
# tiles may be partial (wave quantization). FlashAttention's forward is priced at the same rate.
GEMM_TILE = 128
PREFILL_CHUNK_TOKENS = 8192  # tokens per prefill chunk (vLLM's max_num_batched_tokens is of this order)
MAX_BATCH = 4096  # concurrent sequences per replica, at most


def shape_from_preset(preset: str, vocab: int | None = None) -> Shape:
    """A preset of the trainer (`selene.model.args.PRESETS`, torch-free) as the training planner reads it."""
    return planner_shape(preset, vocab, None)


@dataclass(frozen=True)
class ServeModel:
    """The shape served, with `kv_heads` key/value heads: the shape's own (`Shape.kv_heads`, which a
    checkpoint or preset of a GQA model carries), or another count to plan (`--kv-heads`)."""

    shape: Shape
    kv_heads: int  # = heads without grouped-query attention

    def __post_init__(self) -> None:
        if self.kv_heads < 1 or self.shape.heads % self.kv_heads:
            raise ConfigError(f"--kv-heads {self.kv_heads} must divide the {self.shape.heads} heads")

    @property
    def head_dim(self) -> int:
        return self.shape.hidden // self.shape.heads

    @property
    def _gqa_saving(self) -> int:
        """K and V projection parameters per layer fewer than the shape counts (it counts its own
        key/value heads; negative for more of them)."""
        return 2 * self.shape.hidden * self.head_dim * (self.shape.kv_heads - self.kv_heads)

    @property
    def params(self) -> int:
        return self.shape.params - self.shape.layers * self._gqa_saving

    @property
    def layer_params(self) -> int:
        return self.shape.layer_params - self._gqa_saving

    @property
    def matmul_params(self) -> int:
        """Parameters every token multiplies by: all but the input embedding (the output layer included)."""
        return self.params - self.shape.embedding_params

    def kv_bytes_per_token(self, kv_bytes: float) -> float:
        """KV cache of one token of one sequence, all layers: 2 (K and V) · layers · kv_heads · head_dim · bytes."""
        return 2.0 * self.shape.layers * self.kv_heads * self.head_dim * kv_bytes


@dataclass(frozen=True)
class Efficiency:
    prefill: float | None = None  # flat fraction of peak for prefill; None: the device's curve
    decode_hbm: float = DECODE_HBM_EFFICIENCY
    decode_compute: float | None = None  # fraction of peak for compute-bound decode; None: the device's max
    # decode at batch 1 runs matrix-vector kernels, which stream the weights at their own rate (None: decode_hbm)
    decode_hbm_single: float | None = None
    # the KV cache read of a decode step (attention over the context) at its own rate (None: the weights')
    decode_kv: float | None = None
    decode_overlap: bool = (
        True  # memory and compute of a decode step overlap (GPUs); False: they add up (CPU GEMM)
    )
    # fixed seconds per layer per forward (launches, dispatch) and per forward whatever the depth
    # (sampling, the serving loop); None: the device's kernel launches (`fixed_costs`)
    layer_overhead_s: float | None = None
    step_overhead_s: float | None = None
    prefill_source: str = ""
    decode_source: str = "default DECODE_HBM_EFFICIENCY (selene/plan/serve_cost.py)"
    overhead_source: str = ""


@dataclass
class ServeRequest:
    model: ServeModel
    gpus: int
    device: DeviceSpec
    prompt: int = 2048
    output: int = 256
    batch: int | None = None
    weights_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    ttft_ms: float | None = None
    itl_ms: float | None = None
    min_tokens_per_s: float | None = None
    tp: int | None = None
    pp: int | None = None
    top: int = 10
    efficiency: Efficiency = Efficiency()
    # length distributions (from files): `prompt` and `output` are then their medians, the KV cache is
    # planned for their mean total, and rows also give TTFT and ITL at the 99th percentile
    prompt_lengths: tuple[int, ...] | None = None
    output_lengths: tuple[int, ...] | None = None
    target_percentile: int = 50  # the percentile --ttft-ms / --itl-ms apply to (50 or 99)

    def __post_init__(self) -> None:
        for name, dt in (("--weights-dtype", self.weights_dtype), ("--kv-dtype", self.kv_dtype)):
            if dt not in DTYPE_BYTES:
                raise ConfigError(f"{name} {dt!r}: expected one of {', '.join(DTYPE_BYTES)}")
        if self.prompt < 1 or self.output < 1:
            raise ConfigError("--prompt and --output must be at least 1 token")
        if self.target_percentile not in (50, 99):
            raise ConfigError(f"--target-percentile {self.target_percentile}: expected 50 or 99")

    @property
    def kv_tokens(self) -> float:
        """Tokens of KV cache a sequence holds: prompt + output, the mean of the distributions if given."""
        prompt = statistics.fmean(self.prompt_lengths) if self.prompt_lengths else self.prompt
        output = statistics.fmean(self.output_lengths) if self.output_lengths else self.output
        return prompt + output

    def at(self, q: int) -> ServeRequest:
        """The request with its lengths at percentile `q` of the distributions (itself without them)."""
        prompt = percentile(self.prompt_lengths, q) if self.prompt_lengths else self.prompt
        output = percentile(self.output_lengths, q) if self.output_lengths else self.output
        return replace(self, prompt=prompt, output=output)


# Kernels a decoder layer launches in a forward without CUDA graphs or whole-layer fusion: the two
# norms, the QKV, output, up and down projections (gate and activation too, in SwiGLU), RoPE,
# attention, two residual adds; and per forward the embedding, the final norm, the LM head and the
# sampling. Each costs the device's launch latency (`DeviceSpec.kernel_launch_s`).
KERNELS_PER_LAYER = 12
KERNELS_PER_FORWARD = 4


def fixed_costs(req: ServeRequest) -> tuple[float, float]:
    """(seconds per layer, seconds per forward) of fixed cost: the calibration's, else the device's
    kernel launches."""
    e, launch = req.efficiency, req.device.kernel_launch_s
    layer = e.layer_overhead_s if e.layer_overhead_s is not None else KERNELS_PER_LAYER * launch
    step = e.step_overhead_s if e.step_overhead_s is not None else KERNELS_PER_FORWARD * launch
    return layer, step


def percentile(values: tuple[int, ...], q: int) -> int:
    """The nearest-rank percentile `q` of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def _allreduce_s(nbytes: float, t: int, dev: DeviceSpec) -> float:
    """Ring all-reduce inside a node: 2(t−1) steps of the hop latency, 2(t−1)/t of the message over the bus bandwidth."""
    if t <= 1:
        return 0.0
    bw = min(dev.intra_node_gbps, dev.nvlink_gbps) if dev.nvlink_gbps else dev.intra_node_gbps
    hop = dev.nvlink_latency_s or dev.collective_latency_s / (2 * (t - 1))
    return 2 * (t - 1) * hop + 2.0 * (t - 1) / t * nbytes / (bw * GB)


def _send_s(nbytes: float, t: int, p: int, dev: DeviceSpec) -> float:
    """One PP hand-off: inside a node while the replica fits in one, else over the network."""
    bw = dev.intra_node_gbps if t * p <= dev.gpus_per_node else dev.inter_node_gbps
    hop = (
        dev.nvlink_latency_s
        if (dev.nvlink_latency_s and t * p <= dev.gpus_per_node)
        else dev.collective_latency_s
    )
    return hop + nbytes / (bw * GB)


class _Layout:
    """Memory and time of one (TP, PP) layout of the request, for any batch."""

    def __init__(self, req: ServeRequest, tp: int, pp: int) -> None:
        self.req, self.tp, self.pp = req, tp, pp
        m, dev = req.model, req.device
        s = m.shape
        self.stage_layers = math.ceil(s.layers / pp)
        self.wbytes = DTYPE_BYTES[req.weights_dtype]
        kv_split = min(tp, m.kv_heads)
        # KV of one token of one sequence on one GPU (its stage's layers, its share of the kv heads)
        self.kv_token_gpu = (
            m.kv_bytes_per_token(DTYPE_BYTES[req.kv_dtype]) * self.stage_layers / s.layers / kv_split
        )
        self.weights = m.params * self.wbytes / (tp * pp)
        self.reserve = RESERVE_FRACTION * dev.memory_gb * GB
        self.gemm_rate = dev.peak_tflops * 1e12 * dev.matmul_efficiency  # FLOP/s of the GEMMs (GPUs)

    # ---------------------------------------------------------------- GEMMs (GPUs)
    def _waves(self, rows: float, cols: float) -> float:
        """Fraction of the SMs' tile slots a GEMM of `rows` × `cols` outputs fills (GEMM_TILE tiles)."""
        sms = self.req.device.sms
        tiles = math.ceil(rows / GEMM_TILE) * math.ceil(cols / GEMM_TILE)
        return tiles / (math.ceil(tiles / sms) * sms)

    def gemm_s(self, tokens: float, layers: int) -> float:
        """Seconds of the GEMMs of `layers` layers for `tokens` tokens on one TP rank: QKV, output, MLP
        up (gate and up in SwiGLU) and down projections, each at the device's matmul efficiency times
        the fraction of SM tile slots its output fills."""
        m, s, t = self.req.model, self.req.model.shape, self.tp
        up = (2 if s.mlp == "swiglu" else 1) * s.ffn
        shapes = (
            ((s.hidden + 2 * m.kv_heads * m.head_dim) / t, s.hidden),
            (s.hidden, s.hidden / t),
            (up / t, s.hidden),
            (s.hidden, s.ffn / t),
        )
        per_layer = sum(2.0 * tokens * n * k / self._waves(tokens, n) for n, k in shapes)
        return layers * per_layer / self.gemm_rate

    def head_s(self, rows: float) -> float:
        """Seconds of the LM head (hidden × vocab, split by TP) for `rows` tokens on one rank."""
        s = self.req.model.shape
        return (
            2.0
            * rows
            * s.hidden
            * s.vocab
            / self.tp
            / (self.gemm_rate * self._waves(rows, s.vocab / self.tp))
        )

    # ---------------------------------------------------------------- memory
    def memory(self, batch: int) -> dict[str, float]:
        req, s, t = self.req, self.req.model.shape, self.tp
        kv = self.kv_token_gpu * req.kv_tokens * batch
        chunk = min(PREFILL_CHUNK_TOKENS, req.prompt * batch)
        qkv = s.hidden + 2 * req.model.kv_heads * req.model.head_dim
        mlp = (3 if s.mlp == "swiglu" else 2) * s.ffn
        acts = chunk * ACT_BYTES * (2 * s.hidden + (qkv + s.hidden + mlp) / t) + 4.0 * batch * s.vocab / t
        parts = {"weights": self.weights, "kv": kv, "activations": acts, "reserve": self.reserve}
        used = sum(parts.values())
        parts["free"] = req.device.memory_gb * GB - used
        return {k: v / GB for k, v in parts.items()}

    def fits(self, batch: int) -> bool:
        return self.memory(batch)["free"] >= 0

    def max_batch(self) -> int:
        if not self.fits(1):
            return 0
        lo, hi = 1, MAX_BATCH
        if self.fits(hi):
            return hi
        while hi - lo > 1:  # fits(lo), not fits(hi)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.fits(mid) else (lo, mid)
        return lo

    # ---------------------------------------------------------------- time
    def prefill(self, batch: int) -> tuple[float, dict[str, float], float]:
        """Seconds to prefill `batch` prompts, by part, and the efficiency used."""
        req, dev, t, p = self.req, self.req.device, self.tp, self.pp
        m, s = req.model, req.model.shape
        tokens = req.prompt * batch
        chunk = min(PREFILL_CHUNK_TOKENS, tokens)
        chunks = math.ceil(tokens / chunk)
        flops = 2.0 * (m.matmul_params - s.hidden * s.vocab) * tokens + 2.0 * s.hidden * s.vocab * batch
        flops += 2.0 * s.layers * s.hidden * req.prompt**2 * batch  # causal QKᵀ and AV
        if dev.sms and req.efficiency.prefill is None:  # a GPU: its GEMMs (the busiest stage's layers)
            attention = 2.0 * self.stage_layers * s.hidden * req.prompt**2 * batch / t / chunks
            read = m.matmul_params * self.wbytes / (t * p)  # the stage's matmul weights, once per chunk
            gemms = max(
                self.gemm_s(chunk, self.stage_layers), read / (dev.hbm_gbps * GB * req.efficiency.decode_hbm)
            )
            compute = gemms + attention / self.gemm_rate + self.head_s(batch) / (p * chunks)
            eff = (
                flops / (t * p) / chunks / (compute * dev.peak_tflops * 1e12)
            )  # for the output: fraction of the bf16 peak
        else:  # a calibration's figure, or the device's curve at one layer's work per chunk
            eff = req.efficiency.prefill or dev.efficiency(2.0 * m.layer_params * chunk / t)
            compute = flops / (t * p) / chunks / (dev.peak_tflops * 1e12 * eff)
        tp = self.stage_layers * 2 * _allreduce_s(chunk * s.hidden * ACT_BYTES, t, dev)
        send = _send_s(chunk * s.hidden * ACT_BYTES, t, p, dev) if p > 1 else 0.0
        slots = chunks + p - 1
        parts = {"compute": slots * compute, "tp communication": slots * tp, "pp hand-offs": slots * send}
        per_layer, per_forward = fixed_costs(req)
        if per_layer:
            parts["fixed per layer"] = slots * self.stage_layers * per_layer
        if per_forward:
            parts["fixed per forward"] = per_forward
        return sum(parts.values()), parts, eff

    def _stage(self, x: float) -> dict[str, float]:
        req, dev, t, p = self.req, self.req.device, self.tp, self.pp
        m, s = req.model, req.model.shape
        ctx = req.prompt + req.output / 2.0
        weights = m.matmul_params * self.wbytes / (t * p)
        kv = self.kv_token_gpu * ctx * x
        e = req.efficiency
        hbm_eff = e.decode_hbm_single if (e.decode_hbm_single and x <= 1) else e.decode_hbm
        rate = dev.peak_tflops * 1e12 * (e.decode_compute or dev.max_efficiency)
        # the GEMMs (they read the weights) and attention (it reads the KV cache) are separate kernels,
        # each bound by its own bytes or FLOPs
        attention_flops = 4.0 * ctx * s.hidden * s.layers * x / (t * p)
        if dev.sms and e.decode_compute is None:  # a GPU: the GEMMs of x rows as prefill prices them
            gemm, attention = (
                self.gemm_s(x, self.stage_layers) + self.head_s(x) / p,
                attention_flops / self.gemm_rate,
            )
        else:  # a calibrated rate, or the device's max efficiency
            gemm, attention = 2.0 * m.matmul_params * x / (t * p) / rate, attention_flops / rate
        parts = {
            "hbm weights": weights / hbm_eff / (dev.hbm_gbps * GB),
            "hbm kv": kv / (e.decode_kv or hbm_eff) / (dev.hbm_gbps * GB),
            "compute gemm": gemm,
            "compute attention": attention,
        }
        return {
            **parts,
            "hbm": parts["hbm weights"] + parts["hbm kv"],
            "compute": parts["compute gemm"] + parts["compute attention"],
            "tp communication": self.stage_layers * 2 * _allreduce_s(x * s.hidden * ACT_BYTES, t, dev),
            "pp hand-offs": _send_s(x * s.hidden * ACT_BYTES, t, p, dev) if p > 1 else 0.0,
            "fixed per layer": self.stage_layers * fixed_costs(req)[0],
        }

    def decode(self, batch: int) -> tuple[float, dict[str, float], str]:
        """Seconds per decode step, by part, and the PP mode."""
        p = self.pp

        overlap = self.req.efficiency.decode_overlap

        def total(st: dict[str, float], stages: int, sends: int) -> tuple[float, dict[str, float]]:
            if overlap:  # each kernel at the slower of its reads and its FLOPs, the kernels one after another
                gemm_hbm = st["hbm weights"] >= st["compute gemm"]
                attention_hbm = st["hbm kv"] >= st["compute attention"]
                hbm = gemm_hbm * st["hbm weights"] + attention_hbm * st["hbm kv"]
                compute = (not gemm_hbm) * st["compute gemm"] + (not attention_hbm) * st["compute attention"]
            else:
                hbm, compute = st["hbm"], st["compute"]
            bound = hbm + compute
            parts = {
                "hbm": stages * hbm,
                "compute": stages * compute,
                "tp communication": stages * st["tp communication"],
                "pp hand-offs": sends * st["pp hand-offs"],
            }
            if st["fixed per layer"]:
                parts["fixed per layer"] = stages * st["fixed per layer"]
            step = (
                stages * (bound + st["tp communication"] + st["fixed per layer"]) + sends * st["pp hand-offs"]
            )
            per_forward = fixed_costs(self.req)[1]
            if per_forward:
                parts["fixed per forward"] = per_forward
                step += per_forward
            return step, parts

        single, single_parts = total(self._stage(batch), p, p - 1)
        if p == 1:
            return single, single_parts, "single"
        micro = min(p, batch)
        piped, piped_parts = total(self._stage(batch / micro), p, p)
        if piped < single:
            return piped, piped_parts, f"pipelined ({micro} micro-batches)"
        return single, single_parts, "single stream"
