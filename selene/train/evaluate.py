"""Evaluation inside the training run: harness tasks and reference bits per byte of the model being
trained, scored from its sharded parameters at `train.eval_tasks_every` steps, without an export.

The scoring is `selene eval`'s own (`selene.eval.lm.SeleneLM`: the harness's context/continuation
split, left-truncation, length-sorted batches padded on the right, float32 log-softmax; the tasks
built by `selene.eval.harness.prepare`, scored by `harness.score`); only its forward pass differs.
Rank 0 drives lm-eval. Each batch it needs the logits of is broadcast to every rank and run through
the parallel model by all of them, as a training forward is (FSDP all-gathers each block's weights on
every rank; tensor parallelism runs its shards and leaves the logits vocabulary-sharded, a Shard(-1)
DTensor, gathered whole for the log-softmax); rank 0 scores. With the same weights, these are the
numbers `selene eval` gives on the checkpoint of the step: bit for bit in one process on CPU, to
float32 rounding under tensor parallelism (its matmuls sum in another order). Data-parallel ranks
repeat each forward (every FSDP rank must take part in its all-gathers). Rank 0 imports lm-eval and
builds the tasks once, in a thread started with the run and joined at the first evaluation, so the
other ranks do not wait for it at the first step; each evaluation then costs its forwards and the
harness's bookkeeping (`benchmarks/eval_in_run.py` measures both).

Pipeline parallelism is refused when the run is configured (`check`): a batch of varying width
through the stages of a schedule is not what `torch.distributed.pipelining` runs.
A harness model that generates (``generate_until`` tasks) does so with full forwards here, not with
the KV cache `selene eval` uses for a whole model: the same greedy tokens up to float32 rounding.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.tensor import DTensor

from selene.consoles import console
from selene.errors import ConfigError
from selene.eval import harness
from selene.eval.checkpoint_io import check_vocab, eod_id, load_tokenizer
from selene.eval.config import EvalConfig
from selene.eval.lm_scorer import Scorer
from selene.eval.tasks import data as task_data
from selene.eval.tasks import suites
from selene.eval.tasks.precheck import find_task, lm_eval_tasks, precheck
from selene.model.args import ModelArgs
from selene.train.config import TrainConfig
from selene.train.data import tokenizer_file

REFERENCE = "reference"  # the metrics' task name for bits per byte on `train.eval_reference`
SEED = EvalConfig.model_fields["seed"].default  # `selene eval`'s: the same few-shot examples
_console = console(stderr=True)  # where the training steps' lines go (`selene.train.metrics`)


def enabled(cfg: TrainConfig) -> bool:
    return bool(cfg.eval_tasks or cfg.eval_reference)


def check(cfg: TrainConfig) -> None:
    """What can be refused before torchrun starts: pipeline parallelism, unknown tasks, task data
    that is missing, reference files without text; each a `ConfigError` or `UsageError` naming the
    `train.eval_*` field, nothing written. Tasks found by their YAML are checked without lm-eval
    (`precheck`: 3 s less on every launch); any other name is resolved and built by lm-eval here, in
    a scratch directory that is removed. What only building a found task can show (too few few-shot
    examples, files lm-eval's loader refuses) is said by rank 0 when the run starts, in one line."""
    if not enabled(cfg):
        return
    if cfg.parallel.pp > 1:
        raise ConfigError(
            f"train.eval_tasks: evaluation inside the run does not run under pipeline parallelism "
            f"(parallel.pp {cfg.parallel.pp}); leave train.eval_tasks and train.eval_reference empty and "
            "score the checkpoints with `selene eval`"
        )
    if cfg.eval_tasks:
        include = harness.include_dirs(cfg.eval_include_path)
        try:
            precheck(list(cfg.eval_tasks), cfg.eval_num_fewshot, dict(cfg.eval_task_data), include,
                     task_data.user_datasets_cache())  # fmt: skip
            # every name a plain task found by its YAML (precheck has checked its data): rank 0 builds
            # it when the run starts; otherwise (a tag, a group, a typo) lm-eval's registry decides now
            folders = [*include, *filter(None, [lm_eval_tasks()])]
            if not all(
                find_task(r.task, folders) for r in suites.expand(list(cfg.eval_tasks), cfg.eval_num_fewshot)
            ):
                with (
                    _scratch() as scratch,
                    harness.offline(scratch / "hf_home") as cache,
                    harness.bars_on_terminal_only(),
                ):
                    _prepare(cfg, scratch, cache)
        except ConfigError as e:
            raise ConfigError(f"train.eval_tasks: {e}") from None
    reference_texts(cfg)


def reference_texts(cfg: TrainConfig) -> list[str]:
    """The texts of `train.eval_reference`, in file order, at most `eval_reference_documents`."""
    if not cfg.eval_reference:
        return []
    from selene.quality import examples  # lazy: its readers (0.6 s) load with a reference

    return examples.reference_texts(cfg.eval_reference, cfg.eval_reference_documents, "train.eval_reference")


def metrics_of(results: dict[str, Any]) -> dict[str, float]:
    """``eval/<task>/<metric>`` → value of the harness's results (standard errors left out)."""
    out: dict[str, float] = {}
    for task, values in results.get("results", {}).items():
        for key, value in values.items():
            metric = key.split(",")[0]
            if isinstance(value, int | float) and "stderr" not in key and key not in ("alias", "sample_len"):
                out[f"eval/{task}/{metric}"] = float(value)
    return out


class CollectiveForward:
    """Logits of the parallel model with every rank taking part: rank 0 calls it with a batch
    (B, T), which is broadcast; the other ranks `serve` until rank 0 `finish`es. Returns the whole
    logits (B, T, V) on every rank."""

    def __init__(self, model: nn.Module, device: torch.device, tp: int, world: int) -> None:
        self.model, self.device, self.tp, self.world = model, device, tp, world

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.world > 1:
            dist.broadcast(torch.tensor(tokens.shape, device=self.device), 0)
            dist.broadcast(tokens.contiguous(), 0)
        return self._logits(tokens)

    def serve(self) -> None:
        while True:
            shape = torch.zeros(2, dtype=torch.long, device=self.device)
            dist.broadcast(shape, 0)
            rows, width = shape.tolist()
            if rows == 0:
                return
            tokens = torch.empty(rows, width, dtype=torch.long, device=self.device)
            dist.broadcast(tokens, 0)
            self._logits(tokens)

    def finish(self) -> None:
        if self.world > 1:
            dist.broadcast(torch.zeros(2, dtype=torch.long, device=self.device), 0)

    @torch.no_grad()
    def _logits(self, tokens: torch.Tensor) -> torch.Tensor:
        width = tokens.shape[1]
        # sequence parallelism cuts the sequence into tp equal pieces: pad on the right, which
        # changes no logit before it (causal attention), and cut the padding off again
        pad = -width % self.tp
        if pad:
            tokens = torch.nn.functional.pad(tokens, (0, pad))
        logits = self.model(tokens)
        if isinstance(logits, DTensor):  # tensor parallel: the vocabulary is sharded over tp
            logits = logits.full_tensor()
        return logits[:, :width]


class InRunEval:
    """The run's evaluations: `__call__` at a step is collective (every rank calls it) and returns
    the metrics on rank 0 (``eval/<task>/<metric>``, ``eval/reference/bits_per_byte``), {} elsewhere."""

    def __init__(
        self, cfg: TrainConfig, model: nn.Module, margs: ModelArgs, device: torch.device, tp: int, rank: int, world: int
    ) -> None:  # fmt: skip
        self.cfg, self.rank = cfg, rank
        self.model = model
        self.forward = CollectiveForward(model, device, tp, world)
        self.lm: Any = None
        self.tasks: harness.Tasks | None = None
        self.texts: list[str] = []
        self._scratch: Path | None = None
        self._setup: threading.Thread | None = None
        self._failed: BaseException | None = None
        self.setup_cpu_s: float | None = None  # CPU seconds of rank 0's set-up thread
        if rank != 0:
            return
        meta = {"config": {"data": {"prefixes": list(cfg.data.prefixes)}}}
        file = tokenizer_file(cfg.data.prefixes)
        if file is None:
            raise ConfigError(
                "train.eval_tasks: the token data has no tokenizer file to encode the tasks with"
            )
        tok = load_tokenizer(file, meta)
        check_vocab(tok, margs, meta, file)
        self.texts = reference_texts(cfg)
        scorer = Scorer(logits=self.forward, args=margs, tokenizer=tok, eod=eod_id(tok, meta), device=device)
        # lm-eval's import and the tasks' datasets (~2 s) load beside the first steps, not before them:
        # the other ranks would wait for rank 0 at the first step's collectives
        self._setup = threading.Thread(
            target=self._prepare, args=(scorer,), name="selene-eval-setup", daemon=True
        )
        self._setup.start()

    def _prepare(self, scorer: Any) -> None:
        start = time.thread_time()
        try:
            from selene.eval.lm import SeleneLM  # lazy: lm_eval loads in a run that evaluates only

            self.lm = SeleneLM(scorer=scorer, batch_size=self.cfg.eval_batch_size, seed=SEED)
            if self.cfg.eval_tasks:
                self._scratch = Path(tempfile.mkdtemp(prefix="selene-train-eval-"))
                with self._offline() as cache:
                    self.tasks = _prepare(self.cfg, self._scratch, cache)
        except BaseException as e:  # said by the first evaluation, in the training thread
            self._failed = e
        self.setup_cpu_s = time.thread_time() - start

    def due(self, step: int) -> bool:
        return step % self.cfg.eval_tasks_every == 0 or step == self.cfg.steps

    def __call__(self, step: int) -> dict[str, float]:
        self.model.eval()
        try:
            if self.rank != 0:
                self.forward.serve()
                return {}
            try:
                scores = self._score()
            finally:
                self.forward.finish()
        finally:
            self.model.train()
        shown = ", ".join(f"{k[len('eval/') :]} {v:.4g}" for k, v in scores.items() if k.startswith("eval/"))
        _console.print(f"step {step} eval: {shown}", highlight=False)  # beside the step lines
        return scores

    def _score(self) -> dict[str, float]:
        if self._setup is not None:
            self._setup.join()
            self._setup = None
        if self._failed is not None:
            raise self._failed
        out: dict[str, float] = {}
        if self.setup_cpu_s is not None:  # logged once, with the first scores
            out["eval_setup_cpu_s"], self.setup_cpu_s = self.setup_cpu_s, None
        if self.tasks is not None:
            with self._offline():
                results, _ = harness.score(self.lm, self.tasks, limit=self.cfg.eval_limit, seed=SEED, log_samples=False,
                                           num_fewshot=self.cfg.eval_num_fewshot, environment=False)  # fmt: skip
            out |= metrics_of(results)
        if self.texts:
            from selene.eval.perplexity import bits_per_byte  # lazy: as SeleneLM above

            scored = bits_per_byte(self.lm, self.texts)
            out |= {
                f"eval/{REFERENCE}/bits_per_byte": scored["bits_per_byte"],
                f"eval/{REFERENCE}/loss": scored["loss"],
            }
        return out

    @contextlib.contextmanager
    def _offline(self) -> Iterator[Path]:
        assert self._scratch is not None
        with harness.offline(self._scratch / "hf_home") as cache, harness.bars_on_terminal_only():
            yield cache

    def close(self) -> None:
        if self._setup is not None:
            self._setup.join()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def _prepare(cfg: TrainConfig, scratch: Path, cache: Path) -> harness.Tasks:
    return harness.prepare(
        list(cfg.eval_tasks), num_fewshot=cfg.eval_num_fewshot, include_path=cfg.eval_include_path,
        task_data=dict(cfg.eval_task_data), scratch=scratch / "hf_home", cache=cache,
    )  # fmt: skip


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="selene-train-eval-check-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
