"""`selene train`'s settings: the model, the parallel layout, the optimizer, batches, data, checkpoints."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from selene.config.base import StageConfig, Strict


class ModelConfig(Strict):
    """Decoder-only transformer: a named preset, any field overridable."""

    preset: Literal[
        "debug", "debug-gqa", "125m", "350m", "1.3b", "7b", "llama3-1b", "gpt3-175b", "mt-nlg-530b"
    ] = Field(default="debug", description="The named shape the fields below override (selene.model.args).")
    n_layers: int | None = Field(default=None, ge=1, description="Transformer blocks; default: the preset's.")
    dim: int | None = Field(default=None, ge=8, description="Hidden size; default: the preset's.")
    n_heads: int | None = Field(default=None, ge=1, description="Attention (query) heads; default: the preset's.")
    n_kv_heads: int | None = Field(
        default=None,
        ge=1,
        description="Key/value heads (grouped-query attention): a divisor of n_heads, each serving "
        "n_heads / n_kv_heads query heads; with tensor parallelism also a multiple of parallel.tp. "
        "Default: the preset's (one per query head but for llama3-1b and debug-gqa).",
    )
    ffn_dim: int | None = Field(default=None, ge=8, description="Hidden size of the MLP; default: the preset's.")
    max_seq_len: int | None = Field(default=None, ge=8, description="Longest sequence (positions); default: the preset's.")
    norm: Literal["rmsnorm", "layernorm"] | None = Field(default=None, description="Normalisation layers; default: the preset's.")
    positions: Literal["rope", "learned"] | None = Field(
        default=None, description="Rotary or learned position embeddings; default: the preset's."
    )
    mlp: Literal["swiglu", "gelu"] | None = Field(default=None, description="MLP activation; default: the preset's.")
    tie_embeddings: bool | None = Field(
        default=None, description="The output layer shares the input embedding's weights; default: the preset's."
    )
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0, description="Dropout probability.")
    init_std: float = Field(default=0.02, gt=0.0, description="Std of the normal init (GPT-3/Megatron).")
    vocab_size: int | None = Field(
        default=None, ge=8, description="Default: the tokenizer's vocabulary (from the token dataset)."
    )


class ParallelConfig(Strict):
    """3D layout: pp × dp_replicate × dp_shard × tp must equal the number of processes."""

    dp_replicate: int = Field(default=1, ge=1, description="Replicated data parallel (HSDP outer dimension).")
    dp_shard: int = Field(default=-1, ge=-1, description="FSDP2 sharding degree; -1: whatever is left.")
    tp: int = Field(default=1, ge=1, description="Tensor parallel degree (inside a node).")
    pp: int = Field(default=1, ge=1, description="Pipeline parallel degree.")
    sequence_parallel: bool = Field(default=True, description="Shard norms/dropout activations over tp.")
    pp_schedule: Literal["1f1b", "interleaved_1f1b", "gpipe"] = Field(default="1f1b", description="Pipeline schedule.")
    pp_microbatches: int = Field(
        default=4, ge=1, description="Micro-batches a pipeline-parallel step splits its batch into."
    )
    pp_stages_per_rank: int = Field(default=1, ge=1, description="Virtual stages (interleaved 1F1B: >= 2).")
    pp_layout: list[int] | None = Field(default=None, description="Layers per stage; default: split evenly.")
    reshard_after_forward: bool = Field(default=True, description="FSDP: ZeRO-3 (True) or ZeRO-2 (False).")
    mixed_precision: Literal["bf16", "fp32"] = Field(default="fp32", description="bf16 params on GPU.")
    recompute: Literal["none", "selective", "full"] = Field(
        default="none", description="Activation recomputation in the backward pass: none, selective or full."
    )
    compile: bool = Field(default=False, description="torch.compile each transformer block.")
    float8: Literal["tensorwise", "rowwise"] | None = Field(
        default=None,
        description="float8 matmuls in the blocks' linears (torchao): tensorwise (one scale per tensor; "
        "FSDP all-gathers the weights in float8) or rowwise (a scale per row; more accurate, slower). "
        "Needs CUDA compute capability 8.9+ (H100/H200, Ada); rowwise needs mixed_precision bf16. Default: off.",
    )


class OptimConfig(Strict):
    """AdamW with linear warmup and cosine decay to `min_lr_ratio` × lr."""

    lr: float = Field(default=3e-4, gt=0, description="Peak learning rate.")
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1, description="The decay ends at min_lr_ratio × lr.")
    warmup_steps: int = Field(default=100, ge=0, description="Steps of linear warmup from 0 to lr.")
    decay_steps: int | None = Field(
        default=None,
        ge=1,
        description="cosine, linear: the step at which the decay reaches min_lr_ratio × lr (default: the last "
        "step); wsd: the length of the final decay (default: decay_fraction of the steps).",
    )
    # the schedule (selene.train.schedule); WSD runs can be annealed from any stable-phase checkpoint
    schedule: Literal["cosine", "linear", "wsd"] = Field(
        default="cosine",
        description="cosine or linear decay from the end of warmup; wsd (warmup-stable-decay): lr constant "
        "until the final decay_steps (or decay_fraction of the steps), then decay_shape down to min_lr_ratio × lr.",
    )
    decay_shape: Literal["linear", "cosine", "1-sqrt"] = Field(
        default="1-sqrt",
        description="wsd: the decay's shape; 1-sqrt (1 - sqrt(progress)) is the cooldown Hägele et al. 2024 found best.",
    )
    decay_fraction: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="wsd: the decay's share of the steps when decay_steps is unset (default 0.2, as Hägele et al. 2024).",
    )
    beta1: float = Field(default=0.9, description="AdamW's β1.")
    beta2: float = Field(default=0.95, description="AdamW's β2.")
    eps: float = Field(default=1e-8, description="AdamW's ε.")
    weight_decay: float = Field(default=0.1, description="AdamW's decoupled weight decay.")
    grad_clip: float = Field(default=1.0, gt=0, description="Largest global gradient norm; larger ones are scaled down to it.")
    implementation: Literal["fused", "foreach", "for-loop"] = Field(
        default="fused",
        description="AdamW kernel: fused (one kernel over all tensors; CPU and CUDA), foreach, or for-loop.",
    )
    # Muon (selene.train.optim): torch.optim.Muon on the blocks' 2-D matrices, AdamW on the rest
    name: Literal["adamw", "muon"] = Field(
        default="adamw",
        description="adamw: AdamW on every parameter. muon: torch.optim.Muon on the blocks' hidden matrices "
        "(wq wk wv wo w1 w2 w3), AdamW (lr, betas, weight_decay above) on embeddings, output, norms, biases.",
    )
    muon_lr: float | None = Field(
        default=None, gt=0,
        description="Muon's peak learning rate, scheduled like lr; default: lr (one rate for both under "
        "muon_adjust_lr_fn match_rms_adamw). Keller Jordan's original scaling wants ~0.02.",
    )
    muon_momentum: float = Field(default=0.95, ge=0, lt=1, description="Muon's momentum.")
    muon_nesterov: bool = Field(default=True, description="Nesterov momentum in Muon.")
    muon_ns_steps: int = Field(default=5, ge=1, lt=100, description="Newton-Schulz iterations per step.")
    muon_adjust_lr_fn: Literal["original", "match_rms_adamw"] = Field(
        default="match_rms_adamw",
        description="Muon's per-matrix lr scaling (torch's adjust_lr_fn): match_rms_adamw (Moonlight, "
        "0.2·sqrt(max(A,B)): AdamW's update RMS, so AdamW's lr and weight decay carry over) or original "
        "(Keller Jordan, sqrt(max(1, A/B))).",
    )
    muon_weight_decay: float | None = Field(
        default=None, ge=0, description="Muon's decoupled weight decay; default: weight_decay."
    )


class BatchConfig(Strict):
    """Sequences per optimizer step, and the MT-NLG ramp-up (32 → 1920 in steps of 32 over 12B tokens)."""

    seq_len: int | None = Field(default=None, ge=8, description="Tokens per sequence; default: the model's max_seq_len.")
    global_batch: int = Field(default=8, ge=1, description="Sequences per optimizer step (after ramp-up).")
    micro_batch: int = Field(default=2, ge=1, description="Sequences per data-parallel rank per forward.")
    ramp_start: int | None = Field(default=None, ge=1, description="Global batch at step 0 (ramp-up).")
    ramp_increment: int = Field(default=32, ge=1, description="Sequences the global batch grows by at each ramp-up step.")
    ramp_tokens: int = Field(default=0, ge=0, description="Tokens over which the batch ramps to global_batch.")


class TrainDataConfig(Strict):
    """Token data: one prefix, or Megatron-style weighted prefixes."""

    prefixes: list[str] = Field(default_factory=list, description="Indexed dataset prefixes (.bin/.idx).")
    weights: list[float] | None = Field(default=None, description="One weight per prefix (blended).")
    valid_fraction: float = Field(default=0.02, ge=0.0, lt=0.5, description="Documents held out for validation.")
    seed: int = Field(default=1234, description="Seed of the train/validation split and of the sample order.")
    document_mask: bool = Field(
        default=False,
        description="Attention stays inside each document of a packed sample (never across an EOD): "
        "FlexAttention block masks on CUDA, a dense SDPA mask elsewhere.",
    )
    reset_positions: bool = Field(
        default=False,
        description="With document_mask: positions restart at 0 at each document's first token, as if it were alone.",
    )
    eod_id: int | None = Field(
        default=None,
        ge=0,
        description="The end-of-document id document_mask splits on; default: eod_id of the tokenize "
        "manifest.json next to the data prefixes (set it for token data made by another tool).",
    )


class CheckpointConfig(Strict):
    """Distributed checkpoints (DCP): how often they are saved, how many are kept, whether a run resumes."""

    every: int = Field(default=100, ge=1, description="Save every N steps (and at the end, and on SIGTERM).")
    keep: int = Field(default=2, ge=1, description="Keep the last K checkpoints.")
    resume: bool = Field(default=True, description="Continue from the latest checkpoint in the run.")
    load: str | None = Field(default=None, description="Start from this checkpoint directory instead.")
    # `async` is a Python keyword: the field is `async_`, read and written as `async`
    model_config = ConfigDict(extra="forbid", validate_assignment=True, validate_by_name=True,
                              validate_by_alias=True, serialize_by_alias=True)  # fmt: skip
    async_: bool = Field(
        default=False,
        alias="async",
        description="Write checkpoints in the background (torch.distributed.checkpoint.async_save): the "
        "step waits only for the copy of the state off the device; one save in flight at a time.",
    )


class AnnealConfig(Strict):
    """A decay branch of a WSD run (`selene.train.anneal`): where it starts and what it continues."""

    source: str = Field(description="The stable-phase checkpoint the branch starts from (step-NNNNNN directory).")
    step: int = Field(ge=0, description="Its step: the branch's decay starts here.")
    decay_steps: int = Field(ge=1, description="Steps of the decay: the branch ends at step + decay_steps.")
    data_steps: int = Field(
        ge=1,
        description="Steps the parent's sample index was sized for: the branch builds the same index, so its "
        "data cursor goes on through the parent's data order.",
    )


class TrainConfig(StageConfig):
    """`selene train`: 3D-parallel pretraining with torchrun."""

    class WandbConfig(Strict):
        """Weights & Biases beside metrics.jsonl and TensorBoard (rank 0; needs `pip install 'selene[wandb]'`).

        Offline by default: a run on a machine without credentials or network must never wait on a
        login prompt or a server; `wandb sync <dir>/wandb/offline-run-*` uploads it later."""

        enabled: bool = Field(default=False, description="Log the run to Weights & Biases.")
        project: str = Field(default="selene", description="W&B project.")
        entity: str | None = Field(default=None, description="W&B team or user; default: your default entity.")
        name: str | None = Field(
            default=None,
            description="Display name; default: the run directory's name (<run_dir> of <run_dir>/train).",
        )
        mode: Literal["online", "offline", "disabled"] = Field(
            default="offline",
            description="online (after `wandb login`), offline, or disabled; the WANDB_MODE environment "
            "variable wins when set, so a cluster or CI can switch every run at once.",
        )
        dir: str | None = Field(
            default=None, description="Folder that holds the run's `wandb/` folder; default: the training output."
        )

    model: ModelConfig = Field(default_factory=ModelConfig)
    parallel: ParallelConfig = Field(default_factory=ParallelConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    batch: BatchConfig = Field(default_factory=BatchConfig)
    data: TrainDataConfig = Field(default_factory=TrainDataConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    steps: int = Field(default=100, ge=1, description="Optimizer steps.")
    eval_every: int = Field(default=50, ge=1, description="Validation loss every N steps (and at the last).")
    eval_batches: int = Field(
        default=4, ge=1, description="Global batches of the held-out split the validation loss is the mean of."
    )
    log_every: int = Field(default=1, ge=1, description="Print and log the metrics every N steps.")
    # evaluation inside the run (selene.train.evaluate): `selene eval`'s scoring on the sharded model
    eval_tasks: list[str] = Field(
        default_factory=list,
        description="Harness tasks scored during the run, named as `eval.tasks` names them (bundled selene_*, "
        "include_path, lm-eval's registry with eval_task_data, suites); logged as eval/<task>/<metric>.",
    )
    eval_tasks_every: int = Field(
        default=100, ge=1, description="Score eval_tasks and eval_reference every N steps (and at the last)."
    )
    eval_num_fewshot: int = Field(default=0, ge=0, description="Shots of every task (as eval.num_fewshot).")
    eval_limit: int | None = Field(default=None, ge=1, description="Documents per task, at most (as eval.limit).")
    eval_task_data: dict[str, str] = Field(
        default_factory=dict, description="Task → directory of local files for its dataset (as eval.task_data)."
    )
    eval_include_path: str | None = Field(default=None, description="Extra directory of harness task YAMLs.")
    eval_batch_size: int = Field(default=8, ge=1, description="Requests per forward (as eval.batch_size).")
    eval_reference: list[str] = Field(
        default_factory=list,
        description="Files of reference text (globs: jsonl(.gz/.zst) with `text`, Parquet, selene datasets): "
        "bits per byte on them logged as eval/reference/bits_per_byte.",
    )
    eval_reference_documents: int | None = Field(default=None, ge=1, description="Reference documents, at most.")
    seed: int = Field(default=1234, description="Seed of the model's initialisation.")
    device: Literal["auto", "cpu", "cuda"] = Field(default="auto", description="auto: cuda when there is a GPU, else cpu.")
    peak_tflops: float | None = Field(default=None, gt=0, description="Peak per device for MFU; default by device type.")
    tensorboard: bool = Field(default=True, description="Write TensorBoard logs to <out>/tensorboard.")
    wandb: WandbConfig = Field(default_factory=WandbConfig)
    out: str | None = Field(default=None, description="Output directory; default <run_dir>/train.")
    nproc_per_node: int = Field(default=1, ge=1, description="Processes `selene run` starts (torchrun).")
    # a multi-node run (`selene train --nnodes`): set by the command on each node, not in files
    nnodes: int = Field(default=1, ge=1, description="Nodes of the run (`selene train --nnodes`).")
    node_rank: int = Field(default=0, ge=0, description="This node's rank (`--node-rank`).")
    rdzv_endpoint: str | None = Field(default=None, description="HOST:PORT of the rendezvous (`--rdzv-endpoint`).")
    anneal: AnnealConfig | None = Field(
        default=None, description="Set by `selene train --anneal-from`: the decay branch this run is (not in files)."
    )


    def extra_inputs(self) -> list[str]:
        return list(self.data.prefixes)  # its token data (prefixes of .bin/.idx)
