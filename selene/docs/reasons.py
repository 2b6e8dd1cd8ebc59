"""Every removal reason: what a stage writes to the `reason` column of ``removed.parquet`` (and
counts in its manifest), with the stage that writes it and what it means.

`REASONS` is the one declared catalogue; ``tests/docs/test_reference.py`` reads selene's source for
reason literals (``"malformed:json"``, ``f"lang:{code}"``) and fails on one that is not here, so
the reference page cannot miss a reason. The filters' reasons (``filter:<filter>.<rule>``) are
read from the filters themselves (`rules`), each rule's meaning from
`FILTER_RULES`.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

from selene.docs.markdown import GENERATED, cell, code, table


@dataclass(frozen=True)
class Reason:
    code: str
    """As written in ``removed.parquet``; ``<...>`` is the part that varies (``lang:<code>``)."""
    stage: str
    meaning: str


R = Reason
REASONS: tuple[Reason, ...] = (
    R("malformed:json", "ingest", "A jsonl line that is not JSON, or JSON that is not an object."),
    R("malformed:utf8", "ingest", "A line or text value that is not valid UTF-8."),
    R("malformed:no_text", "ingest", "A record without the source's text field (`text_key`), or with a null text."),
    R("malformed:text_type", "ingest", "A record whose text field is not a string."),
    R("malformed:no_id", "ingest", "A record without the id field the source names (`id_key`), or with a null id."),
    R("malformed:id_type", "ingest", "A record whose id field is neither a string nor an integer."),
    R("malformed:too_large", "ingest", "A record (line, WARC record or text value) larger than `max_record_bytes`; quarantined unread."),
    R("malformed:truncated", "ingest", "A compressed stream or WARC file cut off before its end: what came before is kept."),
    R("malformed:corrupt", "ingest", "Compressed data that cannot be decompressed; the rest of the stream is lost."),
    R("malformed:warc", "ingest", "Unreadable WARC data; reading resumes after it where the format allows."),
    R("malformed:html", "ingest", "An HTML page the extractor cannot parse."),
    R("malformed:parquet", "ingest", "A Parquet file whose footer cannot be read: one record for the whole file."),
    R("malformed:row_group", "ingest", "A Parquet row group that cannot be read: one record per row its footer counts."),
    R("malformed:arrow", "ingest", "An Arrow batch that cannot be read, and the rest of its file."),
    R("skip:http_status", "ingest", "A WARC response whose HTTP status is not 2xx."),
    R("skip:content_type", "ingest", "A WARC response that is not HTML by its Content-Type and body."),
    R("skip:empty_body", "ingest", "A WARC response with no body."),
    R("skip:binary", "ingest", "A body that is binary (NUL or control bytes), whatever it declares."),
    R("skip:no_main_text", "ingest", "The extractor found no main text in the page; the detail names the extractor."),
    R("lang:<code>", "ingest", "The language identifier's top language is not one of `langid.keep`."),
    R("lang:low_score", "ingest", "The top language is kept, but its probability is below `langid.min_score`."),
    R("filter:<filter>.<rule>", "ingest", "A filter's rule rejected the document: see the table below and [Filters](filters.md)."),
    R("exact_dup_of:<id>", "ingest", "The same normalised text (case, punctuation, whitespace folded) as the kept document `<id>`."),
    R("quality:<classifier>", "quality", "The classifier's score fell below the rule's cut-off; the detail gives the score and the cut-off."),
    R("dup_of:<id>", "dedup", "A near-duplicate (MinHash Jaccard at least `threshold`) of the kept document `<id>`."),
    R("spans:too_short", "spans", "Left with fewer than `min_doc_words` words or `min_sentences` sentences, or empty, once its repeated spans were cut."),
    R("substrings:too_short", "substrings", "Left with fewer than `min_chars` characters or `min_words` words once its repeated substrings were cut."),
    R("decontam:<task>", "decontaminate", "Held evaluation text of `<task>`: split around the matches (detail `split: ...`) or dropped whole when cut too often (`dropped: ...`)."),
    R("blend:not_sampled", "blend", "Not drawn into the mix by the source's weight or epochs."),
)  # fmt: skip

NGRAM = re.compile(r"_\d+gram_")
_REJECT = re.compile(r"self\.reject\(\s*\"(\w+)\"")

# What each filter rule rejects: `filter:<filter>.<rule>`. `<n>` stands for the n-gram sizes a
# rule is configured with (gopher_repetition's top_<n>gram_char_frac: one rule per size).
FILTER_RULES: dict[str, str] = {
    "length.min_chars": "Fewer characters than `min_chars`.",
    "length.max_chars": "More characters than `max_chars` (also checked before cleaning).",
    "length.min_words": "Fewer words than `min_words`.",
    "length.max_words": "More words than `max_words`.",
    "gopher_quality.min_words": "Fewer words than `min_words`.",
    "gopher_quality.max_words": "More words than `max_words`.",
    "gopher_quality.mean_word_length": "Mean word length outside `min_mean_word_length`..`max_mean_word_length`.",
    "gopher_quality.symbol_word_ratio": "More '#' or ellipses per word than `max_symbol_word_ratio`.",
    "gopher_quality.bullet_lines": "More lines starting with a bullet than `max_bullet_lines_ratio`.",
    "gopher_quality.ellipsis_lines": "More lines ending in an ellipsis than `max_ellipsis_lines_ratio`.",
    "gopher_quality.alpha_words": "Fewer words with a letter than `min_alpha_words_ratio`.",
    "gopher_quality.stop_words": "Fewer distinct stop words than `min_stop_words`.",
    "gopher_repetition.dup_line_frac": "Duplicate lines over all lines above `max_dup_line_frac`.",
    "gopher_repetition.dup_para_frac": "Duplicate paragraphs over all paragraphs above `max_dup_para_frac`.",
    "gopher_repetition.dup_line_char_frac": "Characters in duplicate lines above `max_dup_line_char_frac`.",
    "gopher_repetition.dup_para_char_frac": "Characters in duplicate paragraphs above `max_dup_para_char_frac`.",
    "gopher_repetition.top_<n>gram_char_frac": "The most frequent n-gram's characters above `top_ngram_char_frac[n]`.",
    "gopher_repetition.dup_<n>gram_char_frac": "Characters in repeated n-grams above `dup_ngram_char_frac[n]`.",
    "c4.bad_words": "The page holds a word of the `bad_words` list.",
    "c4.lorem_ipsum": "A kept line holds 'lorem ipsum'.",
    "c4.curly_bracket": "A kept line holds a curly bracket.",
    "c4.too_few_sentences": "The kept lines hold fewer sentences than `min_num_sentences`.",
    "fineweb.empty": "No non-blank line.",
    "fineweb.line_punct_ratio": "Fewer lines ending in punctuation than `line_punct_thr`.",
    "fineweb.short_line_ratio": "Short lines at least `short_line_thr` of all lines.",
    "fineweb.char_dup_ratio": "Characters in repeated lines at least `char_duplicates_ratio`.",
    "fineweb.list_ratio": "More newlines per word than `new_line_ratio` (a list, not prose).",
    "url.missing_url": "No URL in the record's metadata, with `missing_url: remove`.",
    "url.domain": "The host, or a domain above it, is on a block list.",
    "url.url": "The URL is on a block list.",
    "url.substring": "The URL holds a blocked substring.",
}


def builtins() -> dict[str, Any]:
    """The registered filters, name → class, in registration order (the built-ins first)."""
    from selene.ingest.filters import filter_names, get_filter

    return {name: get_filter(name) for name in filter_names()}


def rules() -> dict[str, list[str]]:
    """Each built-in filter's rules, as its code declares them: a `RuleFilter`'s rules at its
    default settings, then every ``self.reject("<rule>", ...)`` in its class."""
    from selene.ingest.filters import RuleFilter

    out: dict[str, list[str]] = {}
    for name, cls in builtins().items():
        found: list[str] = []
        if issubclass(cls, RuleFilter):
            found += [rule for rule, _ in cls(cls.Config()).rules]
        found += _REJECT.findall(inspect.getsource(cls))
        out[name] = list(dict.fromkeys(found))
    return out


def page() -> str:
    out = ["# Removal reasons", "", GENERATED.format(module="selene.docs.reasons"), ""]
    out.append(
        "Every document a stage does not pass on is written to its output's `removed.parquet` with a "
        "reason and a detail (the measurement and the bound, the file and line), and counted per source "
        "and reason in the stage's manifest: nothing is lost without a reason. `<...>` marks the part "
        "of a reason that varies."
    )
    out += [
        "",
        table(["Reason", "Stage", "Meaning"], ([code(r.code), r.stage, cell(r.meaning)] for r in REASONS)),
    ]
    out += ["", "## Filter rules { #filter-rules }", ""]
    out.append("The `filter:<filter>.<rule>` reasons of the built-in filters, as their code declares them.")
    rows = []
    for name, rule_names in rules().items():
        for rule in rule_names:
            rows.append([code(f"filter:{name}.{rule}"), cell(meaning(name, rule))])
    out += ["", table(["Reason", "Meaning"], rows)]
    return "\n".join(out) + "\n"


def meaning(filter_name: str, rule: str) -> str:
    """What `filter:<filter_name>.<rule>` means; KeyError for a rule the catalogue lacks."""
    key = f"{filter_name}.{NGRAM.sub('_<n>gram_', rule)}"
    if key not in FILTER_RULES:
        raise KeyError(f"filter rule {filter_name}.{rule} has no meaning in selene.docs.reasons.FILTER_RULES")
    return FILTER_RULES[key]
