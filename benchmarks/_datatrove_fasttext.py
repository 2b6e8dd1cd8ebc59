"""datatrove's FastTextClassifierFilter applying a fastText model, as its users run it, and its scoring alone.

    /work/venvs/datatrove/bin/python benchmarks/_datatrove_fasttext.py pipeline IN WORK --model M.bin --label hq --threshold 0.5
    /work/venvs/datatrove/bin/python benchmarks/_datatrove_fasttext.py score IN WORK --model M.bin --label hq [--newline-replacement ""] [--repeats 3]

Run by `benchmarks/quality.py` with datatrove's own Python (it is not importable from selene's venv;
`fasttext` there is the `fasttext-numpy2-wheel` that `datatrove[processing]` installs). IN is a
directory of Parquet files with `id` and `text` columns (selene's document shards, read as they are,
so both tools read the same bytes). `--newline-replacement` is the filter's own option (datatrove's
default deletes newlines); the default here, a space, is what selene scores.

- `pipeline`: ParquetReader → FastTextClassifierFilter(keep_labels=[(label, threshold)], dropped
  documents to an exclusion writer) → ParquetWriter, one LocalPipelineExecutor task on one worker.
  WORK gets `output/` (kept), `removed/` (dropped; both with the label scores in `metadata`), `logs/`,
  and `timing.json`: the executor's run in seconds and the filter's own time from its stats.
- `score`: the model loaded and the documents read first, then only `filter(doc)` per document,
  timed (the fastest of `--repeats` loops); WORK gets `scores.json`: {"seconds", "scores": {id:
  probability of the label}}.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.filters import FastTextClassifierFilter
from datatrove.pipeline.readers import ParquetReader
from datatrove.pipeline.writers import ParquetWriter


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["pipeline", "score"])
    ap.add_argument("input")
    ap.add_argument("work")
    ap.add_argument("--model", required=True)
    ap.add_argument("--label", required=True, help="without __label__")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--newline-replacement", default=" ")
    ap.add_argument("--repeats", type=int, default=1, help="score: loops over the documents; the fastest counts")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    def reader() -> ParquetReader:
        return ParquetReader(args.input, glob_pattern="part-*.parquet", text_key="text", id_key="id")

    def classifier(**kw: object) -> FastTextClassifierFilter:
        return FastTextClassifierFilter(
            args.model,
            keep_labels=[(args.label, args.threshold)],
            newline_replacement=args.newline_replacement,
            **kw,
        )

    if args.mode == "pipeline":
        step = classifier(exclusion_writer=ParquetWriter(str(work / "removed")))
        executor = LocalPipelineExecutor(
            pipeline=[reader(), step, ParquetWriter(str(work / "output"))],
            tasks=1,
            workers=1,
            logging_dir=str(work / "logs"),
        )
        t = time.perf_counter()
        executor.run()
        seconds = time.perf_counter() - t
        stats = json.loads((work / "logs" / "stats.json").read_text())
        filter_s = next(s["time_stats"]["total"] for s in stats if s["name"] == repr(step))
        (work / "timing.json").write_text(json.dumps({"pipeline_s": seconds, "filter_s": filter_s}))
        return

    step = classifier()
    key = f"__label__{args.label}"
    # Loads the model outside the timed loop (selene's scoring is timed with its model loaded too).
    if key not in step.model.labels:
        raise SystemExit(f"{args.model}: no label {key}")
    times = []
    for _ in range(args.repeats):
        docs = list(reader().run())  # afresh: `filter` empties the text of a document it drops
        t = time.perf_counter()
        for doc in docs:
            step.filter(doc)
        times.append(time.perf_counter() - t)
    scores = {doc.id: doc.metadata.get(key, 0.0) for doc in docs}
    (work / "scores.json").write_text(json.dumps({"seconds": min(times), "scores": scores}))


if __name__ == "__main__":
    main()
