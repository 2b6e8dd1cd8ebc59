"""One of datatrove's filters (or its PII formatter) over a jsonl of documents, on one core, for
`benchmarks/filters_vs_datatrove.py`.

    /work/venvs/datatrove/bin/python benchmarks/_datatrove_filters.py IN.jsonl OUT.jsonl \
        --filter {c4,fineweb,url,pii} [--settings JSON]

Run with datatrove's own Python (it is not importable from selene's venv). IN has one
``{"id", "text", "url"}`` per line. `--settings` are the filter's constructor arguments as JSON,
except for ``url``: ``{"domains": [FILE...], "urls": [FILE...], "subwords": [FILE...]}``, whose
lines go to URLFilter's ``extra_domains`` / ``extra_urls`` / ``banned_subwords`` with
``use_integrated_lists=False`` (only these lists), as a user of UT1 lists would pass them.

Each document becomes a datatrove ``Document(text, id, metadata={"url": url})`` and goes through
the step's own ``filter(doc)`` (``format(text)`` for PIIFormatter), the call datatrove's
``BaseFilter.run`` makes per document, without its stats and exclusion writer. OUT gets one line
per document, in order: ``{"id", "kept", "reason", "text"}``: `reason` is the string of datatrove's
``(False, reason)`` (None when kept), `text` the document's text afterwards (C4 drops lines, the
PII formatter rewrites) or None when removed. The last line of stdout is the timing, JSON:
``{"documents", "filter_s", "filter_cpu_s", "loop_s", "loop_cpu_s"}``: the filter calls alone
(summed per call) and the whole loop (documents made, filtered, results kept), in this process.

English words and sentences: datatrove assigns ``SpaCyTokenizer("en")`` to English
(``assets/tokenizer_assignment.csv``): ``spacy.blank("en")`` plus spaCy's rule-based
``sentencizer``, which needs no downloaded model (nltk's punkt is not used for English).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def build(name: str, settings: dict[str, Any]) -> Any:
    if name == "c4":
        from datatrove.pipeline.filters import C4QualityFilter

        return C4QualityFilter(**settings)
    if name == "fineweb":
        from datatrove.pipeline.filters import FineWebQualityFilter

        return FineWebQualityFilter(**settings)
    if name == "pii":
        from datatrove.pipeline.formatters import PIIFormatter

        return PIIFormatter(**settings)
    if name == "url":
        from datatrove.pipeline.filters import URLFilter
        from tldextract import TLDExtract

        def lines(key: str) -> list[str]:
            return [
                line for f in settings.get(key, []) for line in Path(f).read_text().splitlines(keepends=True)
            ]

        step = URLFilter(
            extra_domains=lines("domains"),
            extra_urls=lines("urls"),
            banned_subwords=lines("subwords"),
            use_integrated_lists=False,
        )
        # The public-suffix list bundled with tldextract: what TLDExtract() falls back to offline
        # (and what its cache holds on this machine), without trying the network first.
        step.tldextractor = TLDExtract(suffix_list_urls=())
        return step
    raise SystemExit(f"unknown filter {name!r}: c4, fineweb, url, pii")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--filter", required=True, choices=("c4", "fineweb", "url", "pii"))
    ap.add_argument("--settings", default="{}")
    args = ap.parse_args()

    from datatrove.data import Document

    step = build(args.filter, json.loads(args.settings))
    with open(args.input, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    if args.filter in ("c4", "fineweb"):  # load spaCy outside the timed loop, as a long run would have it
        from datatrove.utils.text import split_into_words

        split_into_words("warm up.", step.language)
    if args.filter == "url":  # the suffix list is read on first use
        step.tldextractor("https://www.example.com/")
    out: list[tuple[str, bool, str | None, str | None]] = []
    spent = spent_cpu = 0.0
    perf, cpu = time.perf_counter, time.process_time
    t0, c0 = perf(), cpu()
    if args.filter == "pii":
        for r in rows:
            t, c = perf(), cpu()
            text = step.format(r["text"])
            spent += perf() - t
            spent_cpu += cpu() - c
            out.append((r["id"], True, None, text))
    else:
        for r in rows:
            doc = Document(text=r["text"], id=r["id"], metadata={"url": r["url"]})
            t, c = perf(), cpu()
            res = step.filter(doc)
            spent += perf() - t
            spent_cpu += cpu() - c
            if res is True or (isinstance(res, tuple) and res[0]):
                out.append((r["id"], True, None, doc.text))
            elif isinstance(res, tuple):
                out.append((r["id"], False, str(res[1]), None))
            else:
                out.append((r["id"], False, "", None))
    loop, loop_cpu = perf() - t0, cpu() - c0
    with open(args.output, "w", encoding="utf-8") as f:
        for id_, kept, reason, text in out:
            f.write(
                json.dumps({"id": id_, "kept": kept, "reason": reason, "text": text}, ensure_ascii=False)
                + "\n"
            )
    timing = {
        "documents": len(rows),
        "filter_s": spent,
        "filter_cpu_s": spent_cpu,
        "loop_s": loop,
        "loop_cpu_s": loop_cpu,
    }
    print(json.dumps(timing))


if __name__ == "__main__":
    main()
