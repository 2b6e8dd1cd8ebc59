"""`selene train`: resolve the training config, check it, its data and its checkpoint, run torchrun.

The checks happen here, before any process starts (`preflight`): a layout that cannot fit the world
size is a configuration error with the whole product spelled out; a missing, truncated or mismatched
token dataset names its file; a checkpoint to resume from that holds another model or was trained
with another tokenizer names the field with both values; a damaged checkpoint names its file. Not a
hang or a traceback on N ranks.

A rank that fails anyway reports its error once: ranks write it to a file in a directory of the run
(`selene.train.worker`), the agent (`selene.train.agent`, torchrun without its own report) adds how
each rank ended, and `rank_failure` makes one `SeleneError` of it, naming the rank.

Stopping (`run_agent`). The agent runs in a session of its own and dies with this process however it
ends (SIGKILL, the OOM killer: `selene.train.agent.follow_launcher`), and its ranks with it. SIGTERM
and SIGINT (Ctrl-C) of this process, or of its whole process group, and a stop requested through
`selene.executor.events.request_stop` (Cancel in the dashboard) reach the agent as one SIGTERM: the ranks
finish their step, save a checkpoint and exit; then `errors.Stopped` says in one line why, the step
and the checkpoint (exit 128 + signal, 1 for a cancellation). A second signal kills the agent and its
ranks at once.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from typing import Any

import yaml
from pydantic import ValidationError

from selene import errors
from selene.config import format_validation_error, load_yaml, parse_yaml
from selene.config.pipeline import PipelineConfig
from selene.errors import ConfigError, InputError, OutputError, PathError, SeleneError
from selene.executor.events import on_stop_request
from selene.io.dataset import MANIFEST
from selene.model.args import ModelArgs
from selene.procs import python_module
from selene.tokenize.indexed import bin_path, idx_path, validate
from selene.tokenize.manifest import token_manifest
from selene.train import checkpoint
from selene.train.agent import ERRORS_ENV, LAUNCHER_ENV
from selene.train.args import model_args
from selene.train.checkpoint import complete_steps, step_dir
from selene.train.checkpoint_digests import sha256_of
from selene.train.config import TrainConfig
from selene.train.data import document_masking, prefix_tokenizer, tokenizer_sha256
from selene.train.dims import ParallelDims, check_tp_heads
from selene.train.evaluate import check as check_in_run_eval
from selene.train.float8 import preflight as float8_preflight
from selene.train.host import allocator_choice
from selene.train.metrics import read_metrics
from selene.train.renew import check_data_unchanged
from selene.train.schedule import check_schedule


def load_train_config(path: str, overrides: list[str]) -> tuple[TrainConfig, str]:
    """(train config, output dir) from a pipeline file (its `train:` section, out = <run_dir>/train)
    or a train-only file (needs `out`), with ``key=value`` overrides (``parallel.tp=2``)."""
    data, lines = load_yaml(path)
    pipeline = "run_dir" in data
    section: dict[str, Any] = dict(data.get("train") or {}) if pipeline else data
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected key=value, e.g. --set parallel.tp=2")
        node = section
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {p!r} is not a group of settings")
        try:
            node[parts[-1]] = parse_yaml(value)
        except yaml.YAMLError as e:
            raise ConfigError(f"--set {item!r}: the value is not valid YAML: {' '.join(str(e).split())}") from None
    try:
        if pipeline:
            pcfg = PipelineConfig.model_validate({**data, "train": section})
            cfg, out = pcfg.train, pcfg.train.out or pcfg.stage_dir("train")
            if not cfg.data.prefixes:
                prefix = pcfg.tokenize.prefix
                cfg.data.prefixes = [os.path.join(pcfg.stage_dir("tokenize"), prefix)]
        else:
            cfg = TrainConfig.model_validate(section)
            if not cfg.out:
                raise ConfigError(f"{path}: a training config on its own needs `out:` (or use a pipeline file)")
            out = cfg.out
    except ValidationError as e:
        raise ConfigError(format_validation_error(e, where=path, lines=lines, root=PipelineConfig if pipeline else TrainConfig)) from None
    return cfg, out


def check_layout(cfg: TrainConfig, world_size: int) -> ParallelDims:
    p = cfg.parallel
    dims = ParallelDims(p.dp_replicate, p.dp_shard, p.tp, p.pp, world_size)
    margs = model_args(cfg.model, cfg.model.vocab_size or 256)
    check_tp_heads(dims.tp, margs.n_heads, margs.kv_heads)
    max_len = margs.max_seq_len
    if (cfg.batch.seq_len or max_len) > max_len:
        raise ConfigError(f"train.batch.seq_len {cfg.batch.seq_len} exceeds the model's max_seq_len {max_len}")
    dp = p.dp_replicate * dims.dp_shard
    if cfg.batch.global_batch % dp:
        raise ConfigError(f"train.batch.global_batch {cfg.batch.global_batch} is not divisible by the data-parallel size {dp}")
    return dims


def check_data(cfg: TrainConfig) -> None:
    """Every data prefix is a complete token dataset (`indexed.validate`) that agrees with its tokenize
    manifest (file sizes), and the prefixes share one tokenizer that fits the model's vocabulary."""
    prefixes = cfg.data.prefixes
    if not prefixes:
        raise ConfigError("train.data.prefixes is empty: give the token dataset prefix (e.g. runs/x/tokenize/data_text_document)")
    tokenizers: dict[str, str] = {}
    for i, prefix in enumerate(prefixes):
        field = f"train.data.prefixes[{i}]"
        if not os.path.exists(idx_path(prefix)) and not os.path.exists(bin_path(prefix)):
            raise PathError(f"{field}: no token dataset at {prefix} (neither {prefix}.idx nor .bin exists); {_found(prefix)}")
        m = token_manifest(prefix)
        vocab = cfg.model.vocab_size or (m.tokenizer.vocab_size if m is not None else None)
        try:
            validate(prefix, vocab)
        except InputError as e:
            raise InputError(f"{e} ({field})") from None
        if m is None:
            continue
        where = os.path.join(os.path.dirname(prefix) or ".", MANIFEST)
        for entry in m.shards:
            f = os.path.join(os.path.dirname(prefix) or ".", entry.name)
            ours = entry.name in (os.path.basename(bin_path(prefix)), os.path.basename(idx_path(prefix)))
            if ours and (size := os.path.getsize(f)) != entry.bytes:
                raise InputError(
                    f"{f}: {size} bytes, but {where} records {entry.bytes}: the file changed after "
                    f"`selene tokenize` wrote it; re-run tokenize ({field})"
                )
        if cfg.model.vocab_size and m.tokenizer.vocab_size > cfg.model.vocab_size:
            raise ConfigError(
                f"train.model.vocab_size {cfg.model.vocab_size} is smaller than the tokenizer's "
                f"{m.tokenizer.vocab_size} pieces ({where}); leave it unset to use the tokenizer's"
            )
        model_file = prefix_tokenizer(prefix)
        if model_file is not None and (digest := sha256_of(model_file)) != m.tokenizer.sha256:
            raise InputError(
                f"{model_file}: sha256 {digest[:16]}..., but {where} records {m.tokenizer.sha256[:16]}... for the "
                f"tokenizer that made this data: the file changed after `selene tokenize` wrote it; restore it "
                f"or re-run tokenize ({field})"
            )
        tokenizers[prefix] = m.tokenizer.sha256
    if len(set(tokenizers.values())) > 1:
        listed = "; ".join(f"{p}: sha256 {h[:16]}..." for p, h in tokenizers.items())
        raise ConfigError(f"train.data.prefixes were tokenized with different tokenizers ({listed}); tokenize them with one")


def _found(prefix: str) -> str:
    if os.path.isdir(prefix):  # the tokenize folder itself, not a prefix inside it
        inside = sorted(p[: -len(".idx")] for p in glob.glob(os.path.join(glob.escape(prefix), "*.idx")))
        if inside:
            return f"{prefix} is a folder; the prefixes of its token data are {inside}: give one of them"
        return f"{prefix} is a folder that holds no .idx file: give the prefix of a token dataset (run `selene tokenize` first)"
    folder = os.path.dirname(prefix) or "."
    if not os.path.isdir(folder):
        return f"the directory {folder} does not exist: run `selene tokenize` first or fix the prefix"
    names = sorted(os.path.basename(p)[: -len(".idx")] for p in glob.glob(os.path.join(glob.escape(folder), "*.idx")))
    return (f"{folder} holds the prefixes {names}" if names else f"{folder} holds no .idx file") + "; fix the prefix"


def expected_model(cfg: TrainConfig) -> ModelArgs:
    from selene.train.loop import vocab_size_of  # lazy: the training stack (0.7 s) stays out of `selene plan`

    return model_args(cfg.model, vocab_size_of(cfg))


def check_checkpoint(cfg: TrainConfig, out: str, args: ModelArgs) -> str | None:
    """The checkpoint this run would start from (None: step 0), checked against the model `args` and
    the data's tokenizer (`checkpoint.check_resume`), the data it was trained on when it is this
    run's own (`renew.check_data_unchanged`) and its meta.json's data cursor."""
    from selene.train.loop import resume_state  # lazy: the training stack (0.7 s) stays out of `selene plan`
    from selene.train.optim import check_checkpoint_optimizer  # lazy: as above (torch's optimizers)

    source = checkpoint.resume_source(os.path.join(out, "checkpoints"), cfg.checkpoint.load, cfg.checkpoint.resume)
    if source is not None:
        meta = checkpoint.check_resume(source, args, tokenizer_sha256(cfg.data.prefixes))
        check_checkpoint_optimizer(meta, source, cfg.optim)
        check_data_unchanged(source, meta, cfg, out)
        resume_state(meta, source)
    return source


def preflight(cfg: TrainConfig, out: str, world_size: int) -> ParallelDims:
    """Everything that can be checked before a rank starts: layout, data, checkpoint to resume."""
    dims = check_layout(cfg, world_size)
    check_schedule(cfg.optim, cfg.steps)
    float8_preflight(cfg)  # float8 on a CPU or a pre-Hopper GPU: one line, before any rank starts
    check_data(cfg)
    document_masking(cfg.data)  # an EOD id to mask by, when train.data.document_mask
    check_checkpoint(cfg, out, expected_model(cfg))
    check_in_run_eval(cfg)  # unknown tasks, missing task data, pp: before any rank starts
    if cfg.wandb.enabled:  # an optional package: its absence is a config error now, not a warning on rank 0 later
        try:
            import wandb  # noqa: F401
        except ImportError as e:
            broken = f" (import wandb: {e})" if e.name != "wandb" else ""
            raise ConfigError(
                f"train.wandb.enabled needs the wandb package: pip install 'selene[wandb]' (or pip install wandb){broken}"
            ) from None
    return dims


def rank_failure(errors_dir: str, returncode: int) -> SeleneError:
    """One error for a failed torchrun: the first rank's `SeleneError` (its class, so its exit code),
    with the other ranks that said the same; else the first unexpected exception with its traceback;
    else how the ranks ended (exit code, signal)."""
    reports = [r for r in map(_read_json, sorted(glob.glob(os.path.join(errors_dir, "rank-*.json")))) if r]
    ends: dict[int, dict[str, Any]] = {}
    for path in sorted(glob.glob(os.path.join(errors_dir, "agent-*.json"))):
        ends.update({int(k): v for k, v in ((_read_json(path) or {}).get("failures") or {}).items()})
    chosen = [r for r in reports if r.get("selene")] or reports
    if chosen:
        first = min(chosen, key=lambda r: (r.get("time", 0.0), r.get("rank", 0)))
        same = sorted(r["rank"] for r in chosen if r is not first and r.get("message") == first.get("message"))
        also = f" ({'ranks' if len(same) > 1 else 'rank'} {', '.join(map(str, same))} too)" if same else ""
        if first.get("selene"):
            cls = getattr(errors, str(first.get("type")), SeleneError)
            cls = cls if isinstance(cls, type) and issubclass(cls, SeleneError) else SeleneError
            return cls(f"training failed on rank {first['rank']}{also}: {first['message']}")
        return SeleneError(
            f"training failed on rank {first['rank']}{also} with an unexpected error (a bug: please report it "
            f"with this traceback):\n{first.get('traceback') or first.get('message')}"
        )
    if ends:
        rank, end = min(ends.items(), key=lambda kv: (kv[1].get("time", 0), kv[0]))
        how = f"was killed by {end['signal']}" if end.get("signal") else f"exited with code {end.get('exitcode')}"
        hint = " (SIGKILL: often the out-of-memory killer)" if end.get("signal") == "SIGKILL" else ""
        return SeleneError(f"training failed: rank {rank} {how}{hint} without reporting an error; its log is above")
    return SeleneError(f"training failed (torchrun exit code {returncode}); the log above has its error")


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def threads_per_rank(nproc_per_node: int) -> int:
    """CPU threads for each of `nproc_per_node` ranks unless OMP_NUM_THREADS says: the cores this
    process may run on, shared out. (torchrun sets 1 for several ranks and leaves one rank to torch's
    default, all cores; a flat 1 left a one-rank CPU run on one core of many.)"""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, nproc_per_node))


def launch(
    cfg: TrainConfig, out: str, nproc_per_node: int, nnodes: int = 1, node_rank: int = 0,
    rdzv_endpoint: str | None = None,
) -> int:
    """Run torchrun with `nproc_per_node` × `nnodes` processes, after `preflight`; 0, or the failure
    of a rank as one `SeleneError` (`rank_failure`)."""
    preflight(cfg, out, nproc_per_node * nnodes)
    allocator_choice()  # a bad SELENE_HOST_ALLOCATOR is one error here, not one per rank
    os.makedirs(out, exist_ok=True)
    config_path = os.path.join(out, f"config.node{node_rank}.json")
    try:
        with open(config_path, "w") as f:
            json.dump(cfg.model_dump(mode="json"), f, indent=1)
    except OSError as e:
        raise OutputError(f"{config_path}: cannot write the training config ({e.strerror or e}); free space or fix permissions, then rerun") from None
    # agent and ranks through `python_module`, not `-m`: a `selene/` folder in the directory the
    # command starts from must not shadow the installed package
    cmd = python_module("selene.train.agent", f"--nproc-per-node={nproc_per_node}", f"--nnodes={nnodes}")
    if nnodes > 1:
        if not rdzv_endpoint:
            raise ConfigError("--nnodes > 1 needs --rdzv-endpoint HOST:PORT (the same on every node)")
        cmd += [f"--node-rank={node_rank}", "--rdzv-backend=c10d", f"--rdzv-endpoint={rdzv_endpoint}", "--rdzv-id=selene"]
    else:
        cmd += ["--standalone"]
    cmd += ["--no-python", *python_module("selene.train.worker", config_path, out, unbuffered=True)]
    # the ranks' error reports go to the system's temporary directory, not into `out`: a full or
    # read-only output is one of the errors they must be able to report
    errors_dir = tempfile.mkdtemp(prefix="selene-rank-errors-")
    env = {
        "TORCH_ELASTIC_SHUTDOWN_TIMEOUT": str(STOP_SECONDS), **os.environ,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", str(threads_per_rank(nproc_per_node))),
        ERRORS_ENV: errors_dir, LAUNCHER_ENV: str(os.getpid()),
    }  # fmt: skip
    stop = _Stop()
    try:
        with on_stop_request(stop.request):  # Cancel in the dashboard: as one SIGTERM
            returncode = run_agent(cmd, env, stop)
        reported = bool(glob.glob(os.path.join(errors_dir, "rank-*.json")))
        if returncode and (reported or not stop.stopping):  # stopped: a rank's error still counts
            raise rank_failure(errors_dir, returncode)
    finally:
        shutil.rmtree(errors_dir, ignore_errors=True)
    if stop.stopping:
        raise stopped(stop, out)
    return 0


def stopped(stop: _Stop, out: str) -> errors.Stopped:
    """The one line a stopped run ends with: why, the step it reached, its checkpoint."""
    root = os.path.join(out, "checkpoints")
    steps = complete_steps(root)
    try:
        logged = max((int(r.get("step", 0)) for r in read_metrics(os.path.join(out, "metrics.jsonl"))), default=0)
    except (OSError, ValueError):
        logged = 0
    if stop.signum is not None:
        name = "Ctrl-C" if stop.signum == signal.SIGINT else signal.Signals(stop.signum).name
        word = "interrupted" if stop.signum == signal.SIGINT else "terminated"
        why, code = f"{word} ({name})", 128 + stop.signum
    else:
        why, code = f"cancelled ({stop.cancel})", 1
    if stop.sent > 1:
        where = f"stopped at once (a second stop); the last checkpoint is step {steps[-1]}: {step_dir(root, steps[-1])}" \
            if steps else "stopped at once (a second stop), before any checkpoint"
    elif steps:
        where = f"stopped at step {max(logged, steps[-1])}, checkpoint {step_dir(root, steps[-1])}"
    else:
        where = "stopped before its first step: no checkpoint"
    return errors.Stopped(f"{why}: {where}" + ("; the same command resumes from it" if steps else ""), code)


STOP_SECONDS = 300
"""How long the agent waits, once stopped, for its ranks to finish their step and save a checkpoint
before it kills them (``TORCH_ELASTIC_SHUTDOWN_TIMEOUT`` when set; torch's own default is 30 s)."""
SIGNALS = ("SIGTERM", "SIGINT")


class _Stop:
    """SIGTERM and SIGINT while the agent runs: the first becomes one SIGTERM to the agent (the
    ranks checkpoint and exit), a second kills the agent's process group (the ranks follow it).
    Signals the process ignores (SIGINT of a background job) stay ignored. Installed only in the
    main thread (where Python runs signal handlers); elsewhere the agent is only tied to this
    process's life."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.received: list[int] = []
        self.cancel: str | None = None  # a stop requested without a signal (`request`): why
        self.sent = 0
        self.previous: dict[int, Any] = {}

    @property
    def signum(self) -> int | None:
        return self.received[0] if self.received else None

    @property
    def stopping(self) -> bool:
        return bool(self.received) or self.cancel is not None

    def request(self, reason: str) -> None:
        """A stop asked for from elsewhere (a Cancel in the dashboard): one SIGTERM to the agent, as
        the first Ctrl-C; a signal after it kills at once. Called from any thread."""
        if self.cancel is None and not self.received:
            self.cancel = reason
            self.forward()

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for name in SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            previous = signal.getsignal(sig)
            if previous in (signal.SIG_IGN, None):
                continue
            self.previous[sig] = previous
            signal.signal(sig, self._on_signal)

    def restore(self) -> None:
        for sig, previous in self.previous.items():
            signal.signal(sig, previous)

    def _on_signal(self, signum: int, frame: object) -> None:
        self.received.append(signum)
        self.forward()

    def started(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.forward()  # a signal that came while the agent was starting

    def forward(self) -> None:
        proc = self.proc
        wanted = len(self.received) + (self.cancel is not None)
        while proc is not None and proc.returncode is None and self.sent < min(wanted, 2):
            self.sent += 1  # first: a signal handler can run in the middle of this one
            try:
                if self.sent == 1:
                    os.kill(proc.pid, signal.SIGTERM)
                else:
                    _kill_group(proc)
            except OSError:
                pass


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if hasattr(os, "killpg"):
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.kill()


def run_agent(cmd: list[str], env: dict[str, str], stop: _Stop) -> int:
    """Run the torchrun agent `cmd` in its own session until it ends, `stop` forwarding SIGTERM and
    Ctrl-C to it; its exit status. An exception here (none expected) kills it first."""
    stop.install()
    try:
        proc = subprocess.Popen(cmd, env=env, start_new_session=hasattr(os, "setsid"))
        try:
            stop.started(proc)
            return proc.wait()
        finally:
            if proc.returncode is None:
                with contextlib.suppress(OSError):
                    _kill_group(proc)
                proc.wait()
    finally:
        stop.restore()
