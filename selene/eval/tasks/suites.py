"""Task suites: a published evaluation table as one name, run with lm-eval's own task definitions,
the published figures printed beside the run's.

``mt-nlg`` is the zero-, one- and few-shot table of Smith et al. 2022, "Using DeepSpeed and Megatron
to Train Megatron-Turing NLG 530B, A Large-Scale Generative Language Model" (arXiv:2201.11990),
Section 5: Table 2 (LAMBADA), Table 3 (RACE-h, BoolQ), Table 4 (WinoGrande, HellaSwag, PIQA), Table 5
(ANLI R2; its HANS row has no lm-eval task) and Table 6 (WiC). The paper evaluates ANLI on round 2
only; `anli_r1` and `anli_r3` can be named beside the suite (``--tasks mt-nlg,anli_r1,anli_r3``).

The figures were transcribed from those tables; HellaSwag's one- and few-shot figures (80.2, 82.4)
agree with Papers with Code's record of the paper, the others were not checked against a second
source. Few-shot counts are GPT-3's K for each task (Brown et al. 2020), the few-shot setting the paper
reports against. Each figure is compared with one lm-eval metric: ``acc_norm`` where lm-eval defines
it for the task (PIQA, HellaSwag: choices of different lengths, which GPT-3-style scoring normalises
by length), ``acc`` elsewhere (single-word answers, or no length normalisation in lm-eval's task).
"""

from __future__ import annotations

from dataclasses import dataclass

SETTINGS = ("zero-shot", "one-shot", "few-shot")


@dataclass(frozen=True)
class Row:
    """One task of a published table: the lm-eval task, the paper's name for it, the metric its
    figures compare with, the few-shot column's k and the figures (percent) of the three columns."""

    task: str
    label: str
    metric: str
    few_shot: int
    figures: tuple[float, float, float]


@dataclass(frozen=True)
class Suite:
    name: str
    model: str  # whose figures the table holds, for the report's column header
    source: str
    rows: tuple[Row, ...]


MT_NLG = Suite(
    name="mt-nlg",
    model="MT-NLG 530B",
    source="Smith et al. 2022 (arXiv:2201.11990), Tables 2-6",
    rows=(
        Row("lambada_openai", "LAMBADA", "acc", 15, (76.56, 73.06, 87.15)),
        Row("boolq", "BoolQ", "acc", 32, (78.20, 82.51, 84.83)),
        Row("race", "RACE-h", "acc", 10, (47.94, 48.42, 47.94)),
        Row("piqa", "PIQA", "acc_norm", 50, (81.99, 80.96, 83.19)),
        Row("hellaswag", "HellaSwag", "acc_norm", 20, (80.24, 80.20, 82.42)),
        Row("winogrande", "WinoGrande", "acc", 50, (73.01, 73.72, 78.85)),
        Row("anli_r2", "ANLI R2", "acc", 50, (36.60, 39.70, 39.60)),
        Row("wic", "WiC", "acc", 32, (48.59, 51.25, 58.46)),
    ),
)

SUITES = {s.name: s for s in (MT_NLG,)}


@dataclass(frozen=True)
class Run:
    """One task evaluated at one number of shots. `name` keys its results: the task's own name, or
    ``<task>-<k>shot`` inside a suite, where one task runs at several shot counts."""

    name: str
    task: str
    shots: int
    suite: str | None = None
    setting: str | None = None
    metric: str | None = None  # the metric `reference` compares with
    reference: float | None = None  # the suite's published figure, as a fraction like lm-eval's


def suite_runs(suite: Suite) -> list[Run]:
    """The suite's runs: each task at zero, one and few shots, in the table's order."""
    runs = []
    for row in suite.rows:
        for setting, shots, figure in zip(SETTINGS, (0, 1, row.few_shot), row.figures, strict=True):
            runs.append(
                Run(f"{row.task}-{shots}shot", row.task, shots, suite.name, setting, row.metric, figure / 100)
            )
    return runs


def expand(names: list[str], num_fewshot: int) -> list[Run]:
    """The runs `names` stand for: a suite's runs with its own shot counts, any other name as one
    task at `num_fewshot` shots (whether it exists is the harness's to say). Nothing is loaded."""
    runs: list[Run] = []
    for name in names:
        runs += suite_runs(SUITES[name]) if name in SUITES else [Run(name, name, num_fewshot)]
    seen: set[str] = set()
    unique = []
    for r in runs:  # a task named twice, or in a suite and alone, runs once per result name
        if r.name not in seen:
            seen.add(r.name)
            unique.append(r)
    return unique


def reference_column(runs: list[Run]) -> str | None:
    """The report's header for the published figures of `runs` (None: no suite among them)."""
    models = {SUITES[r.suite].model for r in runs if r.suite}
    return " / ".join(sorted(models)) + " (paper)" if models else None
