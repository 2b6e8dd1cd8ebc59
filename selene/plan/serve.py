"""`selene plan serve`: analytic planner of inference serving layouts (TP × PP × replicas × batch).

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
           bandwidth, its 4 · context · hidden · layers FLOPs per token)). One roofline over the whole
           step instead hid the KV read under the GEMMs' compute at a large batch (TensorRT-LLM's
           Llama-2-7B at batch 384 was predicted 1.32x as fast as measured; 1.06 now). A calibrated
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
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from selene.errors import ConfigError
from selene.plan.cost import GB, USABLE_MEMORY, Shape
from selene.plan.devices import DeviceSpec, apply_calibration, read_calibration_json
from selene.plan.planner import shape_from_preset as planner_shape
from selene.train.args import PRESETS  # noqa: F401  (the presets `--model` names)

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
    """A preset of the trainer (`selene.train.args.PRESETS`, torch-free) as the training planner reads it."""
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
    decode_overlap: bool = True  # memory and compute of a decode step overlap (GPUs); False: they add up (CPU GEMM)
    # fixed seconds per layer per forward (launches, dispatch) and per forward whatever the depth
    # (sampling, the serving loop); None: the device's kernel launches (`fixed_costs`)
    layer_overhead_s: float | None = None
    step_overhead_s: float | None = None
    prefill_source: str = ""
    decode_source: str = "default DECODE_HBM_EFFICIENCY (selene/plan/serve.py)"
    overhead_source: str = ""


SERVING_FIELDS = (
    "prefill_efficiency", "decode_efficiency", "decode_single_efficiency", "decode_kv_efficiency", "decode_compute_efficiency",
    "layer_overhead_s",
    "step_overhead_s",
)  # fmt: skip
DEVICE_FIELDS = ("peak_tflops", "hbm_gbps", "memory_gb")  # a measured device (the CPU of a serving study)


def load_calibration(path: str | Path, dev: DeviceSpec) -> tuple[DeviceSpec, Efficiency]:
    """A scaling study's calibration.json (max_efficiency, half_work: the device curve prefill uses),
    and/or serving fields (`selene.plan.serve_study`): `prefill_efficiency` (fraction of peak prefill
    reaches), `decode_efficiency` (fraction of memory bandwidth a decode step reaches),
    `decode_compute_efficiency` (fraction of peak a compute-bound decode step reaches),
    `decode_single_efficiency` (the bandwidth fraction at batch 1, matrix-vector kernels),
    `decode_kv_efficiency` (the bandwidth fraction of the KV cache's read by attention),
    `decode_overlap` (false: a decode step's memory and compute times add up, as CPU GEMMs of a few
    rows do), `layer_overhead_s` (fixed seconds per layer per forward), and a `measured_device` object
    (name, peak_tflops, hbm_gbps, memory_gb) that replaces the table's figures of that device (the
    CPU, which the table cannot know)."""
    p = Path(path)
    data = read_calibration_json(p)
    curve = [k for k in ("max_efficiency", "half_work") if k in data]
    serving = [k for k in SERVING_FIELDS if k in data]
    if not curve and not serving:
        raise ConfigError(
            f"calibration file {p}: no max_efficiency/half_work (from `selene scaling-study`) and no serving fields "
            f"({', '.join(SERVING_FIELDS)})"
        )
    for key in curve + serving:
        v = data[key]
        bounded = key not in ("half_work", "layer_overhead_s", "step_overhead_s")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 or (v == 0 and bounded) or (bounded and v > 1):
            raise ConfigError(f"calibration file {p}: field {key!r} must be a number" + (" in (0, 1]" if bounded else " >= 0"))
    if curve:
        if len(curve) < 2:
            raise ConfigError(f"calibration file {p}: give both max_efficiency and half_work")
        dev = apply_calibration(dev, {**data, "source": str(p)})
    measured = data.get("measured_device")
    if dev.name == "cpu" and not isinstance(measured, dict):
        raise ConfigError(f"calibration file {p}: no measured_device; the CPU's figures come from a serving study (benchmarks/serve.py --cpu)")
    if isinstance(measured, dict) and measured.get("name") == dev.name:
        for key in DEVICE_FIELDS:
            v = measured.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                raise ConfigError(f"calibration file {p}: device.{key} must be a positive number")
        dev = replace(
            dev, peak_tflops=float(measured["peak_tflops"]), hbm_gbps=float(measured["hbm_gbps"]),
            memory_gb=float(measured["memory_gb"]), calibrated_from=f"serving study {p}",
        )  # fmt: skip
    eff = Efficiency()
    if "prefill_efficiency" in data:
        eff = replace(eff, prefill=float(data["prefill_efficiency"]), prefill_source=f"prefill_efficiency in {p}")
    if "decode_efficiency" in data:
        eff = replace(eff, decode_hbm=float(data["decode_efficiency"]), decode_source=f"decode_efficiency in {p}")
    if "decode_compute_efficiency" in data:
        eff = replace(eff, decode_compute=float(data["decode_compute_efficiency"]))
    if "decode_single_efficiency" in data:
        eff = replace(eff, decode_hbm_single=float(data["decode_single_efficiency"]))
    if "decode_kv_efficiency" in data:
        eff = replace(eff, decode_kv=float(data["decode_kv_efficiency"]))
    if "decode_overlap" in data:
        if not isinstance(data["decode_overlap"], bool):
            raise ConfigError(f"calibration file {p}: field 'decode_overlap' must be true or false")
        eff = replace(eff, decode_overlap=data["decode_overlap"])
    if "layer_overhead_s" in data:
        eff = replace(eff, layer_overhead_s=float(data["layer_overhead_s"]), overhead_source=f"layer_overhead_s in {p}")
    if "step_overhead_s" in data:
        eff = replace(eff, step_overhead_s=float(data["step_overhead_s"]), overhead_source=f"overheads in {p}")
    return dev, eff


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
        prompt = _percentile(self.prompt_lengths, q) if self.prompt_lengths else self.prompt
        output = _percentile(self.output_lengths, q) if self.output_lengths else self.output
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


def _percentile(values: tuple[int, ...], q: int) -> int:
    """The nearest-rank percentile `q` of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def read_lengths(value: str, option: str) -> tuple[int, tuple[int, ...] | None]:
    """`--prompt` / `--output`: a number of tokens, or a file of lengths (a JSON list, or one number per
    line: lengths of real requests, e.g. from a log) -> (its median, the lengths); a ConfigError names
    the file and line otherwise."""
    if value.strip().isdigit():
        return int(value), None
    path = Path(value)
    if not path.is_file():
        raise ConfigError(f"{option} {value!r}: not a number of tokens and no such file")
    text = path.read_text(encoding="utf-8", errors="replace")
    lengths: list[int] = []
    if text.lstrip().startswith("["):
        import json

        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{option} {path}: not a JSON list of lengths ({e.msg}, line {e.lineno})") from None
        for i, x in enumerate(raw):
            if not isinstance(x, int) or isinstance(x, bool) or x < 1:
                raise ConfigError(f"{option} {path}: item {i} is {x!r}, not a length of at least 1 token")
            lengths.append(x)
    else:
        for n, line in enumerate(text.splitlines(), 1):
            field = line.split("#")[0].strip()
            if not field:
                continue
            if not field.isdigit() or int(field) < 1:
                raise ConfigError(f"{option} {path}, line {n}: {line.strip()!r} is not a length of at least 1 token")
            lengths.append(int(field))
    if not lengths:
        raise ConfigError(f"{option} {path}: no lengths in the file")
    values = tuple(lengths)
    return _percentile(values, 50), values


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
    hop = dev.nvlink_latency_s if (dev.nvlink_latency_s and t * p <= dev.gpus_per_node) else dev.collective_latency_s
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
        self.kv_token_gpu = m.kv_bytes_per_token(DTYPE_BYTES[req.kv_dtype]) * self.stage_layers / s.layers / kv_split
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
        shapes = ((s.hidden + 2 * m.kv_heads * m.head_dim) / t, s.hidden), (s.hidden, s.hidden / t), (up / t, s.hidden), (s.hidden, s.ffn / t)
        per_layer = sum(2.0 * tokens * n * k / self._waves(tokens, n) for n, k in shapes)
        return layers * per_layer / self.gemm_rate

    def head_s(self, rows: float) -> float:
        """Seconds of the LM head (hidden × vocab, split by TP) for `rows` tokens on one rank."""
        s = self.req.model.shape
        return 2.0 * rows * s.hidden * s.vocab / self.tp / (self.gemm_rate * self._waves(rows, s.vocab / self.tp))

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
            gemms = max(self.gemm_s(chunk, self.stage_layers), read / (dev.hbm_gbps * GB * req.efficiency.decode_hbm))
            compute = gemms + attention / self.gemm_rate + self.head_s(batch) / (p * chunks)
            eff = flops / (t * p) / chunks / (compute * dev.peak_tflops * 1e12)  # for the output: fraction of the bf16 peak
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
            gemm, attention = self.gemm_s(x, self.stage_layers) + self.head_s(x) / p, attention_flops / self.gemm_rate
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
            step = stages * (bound + st["tp communication"] + st["fixed per layer"]) + sends * st["pp hand-offs"]
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


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _batches(max_batch: int) -> list[int]:
    out = [b for b in (2**i for i in range(13)) if b < max_batch]
    return [*out, max_batch]


BINDING = {"hbm": "HBM bandwidth", "compute": "compute", "communication": "communication", "overhead": "fixed costs"}


def _row(req: ServeRequest, lay: _Layout, batch: int, max_batch: int) -> dict[str, Any]:
    dev = req.device
    replicas = req.gpus // (lay.tp * lay.pp)
    ttft, ttft_parts, pf_eff = lay.prefill(batch)
    ttft_one, _, _ = lay.prefill(1)
    itl, itl_parts, mode = lay.decode(batch)
    total = replicas * batch / itl
    tails: dict[str, float] = {}
    if req.prompt_lengths or req.output_lengths:  # the 99th percentile of the lengths, the same layout
        tail = _Layout(req.at(99), lay.tp, lay.pp)
        tails = {"ttft_p99_ms": tail.prefill(batch)[0] * 1e3, "itl_p99_ms": tail.decode(batch)[0] * 1e3}
    comm = itl_parts["tp communication"] + itl_parts["pp hand-offs"]
    terms = {"hbm": itl_parts["hbm"], "compute": itl_parts["compute"], "communication": comm,
             "overhead": itl_parts.get("fixed per layer", 0.0) + itl_parts.get("fixed per forward", 0.0)}
    decode_bound = BINDING[max(terms, key=lambda k: terms[k])]
    # at the largest batch that fits, memory (KV capacity) is what stops the throughput growing
    binding = "memory" if req.batch is None and batch == max_batch < MAX_BATCH else decode_bound
    per_layer, per_forward = fixed_costs(req)
    if dev.sms and req.efficiency.prefill is None:
        prefill_src = f"GEMM tiles over {dev.sms} SMs at {dev.matmul_efficiency} of peak (matmul_efficiency, selene/plan/devices.py)"
    else:
        prefill_src = req.efficiency.prefill_source or f"device curve ({dev.calibrated_from})"
    return {
        "layout": {"tp": lay.tp, "pp": lay.pp, "replicas": replicas, "batch": batch, "gpus_per_replica": lay.tp * lay.pp},
        "ttft_ms": ttft * 1e3,
        "ttft_one_ms": ttft_one * 1e3,
        "itl_ms": itl * 1e3,
        **tails,
        "tokens_per_s_per_gpu": total / req.gpus,
        "tokens_per_s_total": total,
        "max_batch_per_replica": max_batch,
        "max_concurrent_sequences": replicas * max_batch,
        "memory_gb": lay.memory(batch),
        "binding": binding,
        "decode_bound": decode_bound,
        "pp_mode": mode,
        "ttft_parts_ms": {k: v * 1e3 for k, v in ttft_parts.items()},
        "itl_parts_ms": {k: v * 1e3 for k, v in itl_parts.items()},
        "efficiency": {
            "prefill": {"fraction_of_peak": pf_eff, "source": prefill_src},
            "decode_hbm": {"fraction_of_hbm_bandwidth": req.efficiency.decode_hbm, "source": req.efficiency.decode_source},
            "decode_compute": {
                "fraction_of_peak": req.efficiency.decode_compute or (dev.matmul_efficiency if dev.sms else dev.max_efficiency),
                "source": req.efficiency.decode_source if req.efficiency.decode_compute else (
                    f"GEMM tiles of the batch's rows, as prefill ({prefill_src})" if dev.sms
                    else f"device max efficiency ({dev.calibrated_from})"
                ),
            },
            "fixed_costs": {
                "per_layer_s": per_layer, "per_forward_s": per_forward,
                "source": req.efficiency.overhead_source or (
                    f"kernel launches: {KERNELS_PER_LAYER} per layer, {KERNELS_PER_FORWARD} per forward, "
                    f"{dev.kernel_launch_s * 1e6:g} µs each (selene/plan/devices.py)"
                ),
            },
            "communication": {
                "bus_gbps": min(dev.intra_node_gbps, dev.nvlink_gbps) if dev.nvlink_gbps else dev.intra_node_gbps,
                "hop_latency_s": dev.nvlink_latency_s or dev.collective_latency_s,
                "source": "selene/plan/devices.py (NCCL bus bandwidth; NVLink data sheet)",
            },
        },
    }


def _tp_ok(req: ServeRequest, tp: int) -> bool:
    s, kv = req.model.shape, req.model.kv_heads
    if req.tp is not None:
        return tp == req.tp
    return tp <= req.device.gpus_per_node and not s.heads % tp and not s.ffn % tp and (not kv % tp or not tp % kv)


def _latency(req: ServeRequest, r: dict[str, Any], key: str) -> float:
    """The row's TTFT or ITL at the percentile the targets apply to (p99 only with distributions)."""
    return float(r.get(f"{key}_p99_ms", r[f"{key}_ms"]) if req.target_percentile == 99 else r[f"{key}_ms"])


def _meets(req: ServeRequest, r: dict[str, Any]) -> bool:
    return (
        (req.ttft_ms is None or _latency(req, r, "ttft") <= req.ttft_ms)
        and (req.itl_ms is None or _latency(req, r, "itl") <= req.itl_ms)
        and (req.min_tokens_per_s is None or r["tokens_per_s_total"] >= req.min_tokens_per_s)
    )


def _shortfall(req: ServeRequest, r: dict[str, Any]) -> float:
    """How far a row misses the targets: the largest ratio by which it misses one (1: meets them)."""
    miss = [1.0]
    if req.ttft_ms is not None:
        miss.append(_latency(req, r, "ttft") / req.ttft_ms)
    if req.itl_ms is not None:
        miss.append(_latency(req, r, "itl") / req.itl_ms)
    if req.min_tokens_per_s is not None:
        miss.append(req.min_tokens_per_s / r["tokens_per_s_total"])
    return max(miss)


def pareto(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows no other row beats on TTFT, ITL and tokens/s per GPU at once, fastest ITL first."""

    def key(r: dict[str, Any]) -> tuple[float, float, float]:
        return (r["ttft_ms"], r["itl_ms"], -r["tokens_per_s_per_gpu"])

    def dominated(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
        return all(y <= x for x, y in zip(a, b, strict=True)) and b != a

    keys = [key(r) for r in rows]
    front = [r for r, k in zip(rows, keys, strict=True) if not any(dominated(k, o) for o in keys)]
    return sorted(front, key=lambda r: (r["itl_ms"], -r["tokens_per_s_per_gpu"]))


def _summary(values: tuple[int, ...] | None) -> dict[str, float] | None:
    if not values:
        return None
    return {"n": len(values), "mean": statistics.fmean(values), "p50": _percentile(values, 50), "p99": _percentile(values, 99),
            "max": max(values)}  # fmt: skip


def _spread(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """`n` rows evenly spaced along `rows`, both ends kept."""
    if len(rows) <= n:
        return rows
    if n == 1:
        return rows[:1]
    idx = sorted({round(i * (len(rows) - 1) / (n - 1)) for i in range(n)})
    return [rows[i] for i in idx]


def make_serve_plan(req: ServeRequest) -> dict[str, Any]:
    s, dev = req.model.shape, req.device
    rows: list[dict[str, Any]] = []
    smallest: dict[str, Any] | None = None
    considered = 0
    for tp in _divisors(req.gpus):
        if not _tp_ok(req, tp):
            continue
        for pp in _divisors(req.gpus // tp):
            if pp > s.layers or (req.pp is not None and pp != req.pp):
                continue
            considered += 1
            lay = _Layout(req, tp, pp)
            mb = lay.max_batch()
            batches = [req.batch] if req.batch else _batches(mb)
            if mb == 0 or (req.batch and req.batch > mb):
                mem = lay.memory(req.batch or 1)
                if smallest is None or mem["free"] > smallest["memory_gb"]["free"]:
                    smallest = {"layout": {"tp": tp, "pp": pp, "batch": req.batch or 1}, "memory_gb": mem}
                continue
            rows.extend(_row(req, lay, b, mb) for b in batches)
    if considered == 0:
        raise ConfigError(
            f"no legal layout for {req.gpus} GPUs: TP must divide the {s.heads} heads, the FFN {s.ffn} and "
            f"{req.gpus}, and stay within a node ({dev.gpus_per_node} GPUs); PP ≤ {s.layers} layers"
        )
    targeted = any(x is not None for x in (req.ttft_ms, req.itl_ms, req.min_tokens_per_s))
    meeting = [r for r in rows if _meets(req, r)]
    if targeted:
        if req.min_tokens_per_s is not None and req.ttft_ms is None and req.itl_ms is None:
            meeting.sort(key=lambda r: (r["itl_ms"], -r["tokens_per_s_per_gpu"]))
        else:
            meeting.sort(key=lambda r: (-r["tokens_per_s_per_gpu"], r["itl_ms"]))
        layouts, ranking = meeting[: req.top], "meeting the target, best first"
    else:
        front = pareto(rows)
        layouts, ranking = _spread(front, req.top), f"Pareto front of TTFT / ITL vs tokens/s per GPU ({len(front)} points)"
    closest = sorted(rows, key=lambda r: (_shortfall(req, r), r["itl_ms"]))[:3] if targeted and not meeting else []
    m = req.model
    return {
        "model": {
            **asdict(s),
            "kv_heads": m.kv_heads,
            "head_dim": m.head_dim,
            "params": m.params,
            "kv_bytes_per_token": m.kv_bytes_per_token(DTYPE_BYTES[req.kv_dtype]),
        },
        "device": asdict(dev),
        "gpus": req.gpus,
        "prompt": req.prompt,
        "output": req.output,
        "lengths": None if not (req.prompt_lengths or req.output_lengths) else {
            "prompt": _summary(req.prompt_lengths), "output": _summary(req.output_lengths),
            "kv_tokens_per_sequence": req.kv_tokens, "target_percentile": req.target_percentile,
        },
        "weights_dtype": req.weights_dtype,
        "kv_dtype": req.kv_dtype,
        "targets": {"ttft_ms": req.ttft_ms, "itl_ms": req.itl_ms, "min_tokens_per_s": req.min_tokens_per_s},
        "ranking": ranking,
        "considered_layouts": considered,
        "fitting_rows": len(rows),
        "meets_target": bool(meeting) if targeted else None,
        "layouts": layouts,
        "closest": closest,
        "smallest_if_none_fits": smallest if not rows else None,
        "constants": {
            "reserve_fraction": RESERVE_FRACTION,
            "decode_hbm_efficiency": req.efficiency.decode_hbm,
            "prefill_chunk_tokens": PREFILL_CHUNK_TOKENS,
            "max_batch": MAX_BATCH,
        },
    }


# ------------------------------------------------------------------------------------------ output


def render(plan: dict[str, Any], console: Any) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    m, dev = plan["model"], plan["device"]
    console.print(
        f"[b]model[/b] {m['params'] / 1e9:,.2f}B parameters ({plan['weights_dtype']}), {m['layers']} layers, hidden "
        f"{m['hidden']}, {m['heads']} heads ({m['kv_heads']} kv); KV cache {m['kv_bytes_per_token'] / 2**20:,.3f} MiB "
        f"per token ({plan['kv_dtype']})"
    )
    console.print(
        f"[b]serving[/b] {plan['gpus']} × {dev['name']} ({dev['memory_gb']:g} GB, {dev['hbm_gbps']:g} GB/s HBM, "
        f"{dev['peak_tflops']:g} TFLOP/s); prompt {plan['prompt']:,} + output {plan['output']:,} tokens; "
        f"{plan['considered_layouts']} TP × PP layouts, reserve {plan['constants']['reserve_fraction']:.0%} of memory"
    )
    if plan["smallest_if_none_fits"] is not None:
        s = plan["smallest_if_none_fits"]
        mem = s["memory_gb"]
        console.print(
            f"[red]no layout fits[/red]: the smallest, TP{s['layout']['tp']}·PP{s['layout']['pp']} batch {s['layout']['batch']}, "
            f"is {-mem['free']:,.1f} GB short per GPU of {dev['memory_gb']:g} GB (weights {mem['weights']:,.1f}, KV "
            f"{mem['kv']:,.2f}, activations {mem['activations']:,.2f}, reserve {mem['reserve']:,.1f}); use more GPUs, "
            "--weights-dtype fp8/int8, --kv-dtype fp8, or shorter prompts"
        )
        return
    rows = plan["layouts"]
    if plan["meets_target"] is False:
        t = {k: v for k, v in plan["targets"].items() if v is not None}
        console.print(
            "[red]no layout meets the target[/red] (" + ", ".join(f"{k} {v:g}" for k, v in t.items()) + "); the closest:"
        )
        rows = plan["closest"]
        title = "closest layouts"
    else:
        title = plan["ranking"]
    lengths = plan.get("lengths")
    if lengths:
        def say(name: str) -> str:
            d = lengths[name]
            return f"{name} {plan[name]:,} tokens" if d is None else f"{name} p50 {d['p50']:,} / mean {d['mean']:,.0f} / p99 {d['p99']:,} ({d['n']:,} lengths)"

        console.print(
            f"[b]lengths[/b] {say('prompt')}; {say('output')}; KV planned for {lengths['kv_tokens_per_sequence']:,.0f} tokens a "
            f"sequence (the mean); TTFT and ITL at p50 and p99; targets apply to p{lengths['target_percentile']}"
        )
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    cols = ["#", "TP", "PP", "rep", "batch", "max seq", "TTFT ms", "ITL ms", "tok/s/GPU", "tok/s", "GB w", "kv", "act", "free", "bound"]
    if lengths:
        cols[7:7] = ["TTFT p99"]
        cols[9:9] = ["ITL p99"]
    for col in cols:
        table.add_column(col, justify="left" if col == "bound" else "right", no_wrap=True)
    for i, r in enumerate(rows, 1):
        row = cells(i, r)
        if lengths:
            row[7:7] = [f"{r['ttft_p99_ms']:,.1f}"]
            row[9:9] = [f"{r['itl_p99_ms']:,.2f}"]
        table.add_row(*row)
    wide = Console(file=console.file, width=max(console.width, 150 if lengths else 130), force_terminal=console.is_terminal)
    wide.print(table)
    if rows:
        e = rows[0]["efficiency"]
        console.print(
            f"efficiency: prefill {e['prefill']['fraction_of_peak']:.3f} of peak ({e['prefill']['source']}); decode "
            f"{e['decode_hbm']['fraction_of_hbm_bandwidth']:.2f} of HBM bandwidth ({e['decode_hbm']['source']}); "
            f"decode compute {e['decode_compute']['fraction_of_peak']:.3f} of peak"
        )


def cells(i: int, r: dict[str, Any]) -> list[str]:
    lay, mem = r["layout"], r["memory_gb"]
    return [
        str(i), str(lay["tp"]), str(lay["pp"]), str(lay["replicas"]), str(lay["batch"]), f"{r['max_concurrent_sequences']:,}",
        f"{r['ttft_ms']:,.1f}", f"{r['itl_ms']:,.2f}", f"{r['tokens_per_s_per_gpu']:,.1f}", f"{r['tokens_per_s_total']:,.0f}",
        f"{mem['weights']:,.1f}", f"{mem['kv']:,.1f}", f"{mem['activations']:,.2f}", f"{mem['free']:,.1f}", r["binding"],
    ]  # fmt: skip
