"""The published filter sets: C4's rules, FineWeb's, URL block lists and PII redaction; each rule's
decision and detail, the edits they make, and the errors of their list files."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from selene.errors import ConfigError
from selene.ingest import stage
from selene.ingest.config import IngestConfig, SourceSpec
from selene.ingest.filters import FilterChain, FiltersConfig, Verdict
from selene.ingest.filters.segment import count_sentences
from selene.io import dataset
from tests.corpus import pile_line, write_zst


def run(name: str, text: str, meta: dict[str, Any] | None = None, **settings: Any) -> Verdict:
    return FilterChain(FiltersConfig([{"name": name, **settings}])).run(text, "web", meta)


GOOD = [
    "The committee met on Tuesday to discuss the budget for next year.",
    "Several members raised concerns about the cost of the new building. They asked for a review.",
    "After a long debate the proposal was accepted by a narrow margin of votes.",
]


# ------------------------------------------------------------------------------------------- c4


def test_c4_drops_lines_and_keeps_the_page() -> None:
    page = "\n".join(
        [
            "Home | About | Contact",  # no terminal punctuation
            GOOD[0],
            "Read more...",  # an ellipsis
            "Yes it is.",  # 3 words < 5
            "Please enable JavaScript in your browser to see this page properly.",
            GOOD[1] + "[1]",  # a citation mark, cut
            "This website uses cookies to improve your experience with us.",
            "A" * 1001 + " is a very long word indeed.",
            "",
            GOOD[2],
        ]
    )
    v = run("c4", page)
    assert v.reason is None
    assert v.text == "\n".join(GOOD)
    assert v.edits == {"c4.lines_removed": 6}


def test_c4_page_rules_name_the_line() -> None:
    lorem = "\n".join([*GOOD, "Lorem ipsum dolor sit amet, consectetur adipiscing elit."])
    assert run("c4", lorem).reason == (
        "filter:c4.lorem_ipsum",
        "line='Lorem ipsum dolor sit amet, consectetur adipiscing elit.'",
    )
    code = "\n".join([*GOOD, "The function returns {a: 1, b: 2} to its caller."])
    assert run("c4", code).reason[0] == "filter:c4.curly_bracket"  # type: ignore[index]
    # Both rules only look at lines that survive the line rules: an unterminated line is dropped first.
    assert run("c4", "\n".join([*GOOD, "function f() { return 1 }"])).reason is None


def test_c4_counts_sentences_of_the_kept_lines() -> None:
    assert run("c4", GOOD[0] + "\n" + GOOD[1]).reason is None  # 3 sentences, the default minimum
    assert run("c4", GOOD[0] + "\n" + GOOD[2]).reason == ("filter:c4.too_few_sentences", "sentences=2 < 3")
    assert run("c4", "\n".join(GOOD), min_num_sentences=5).reason == (
        "filter:c4.too_few_sentences",
        "sentences=4 < 5",
    )
    assert run("c4", "Menu\nLogin").reason == ("filter:c4.too_few_sentences", "sentences=0 < 3")


def test_c4_rules_switch_off_one_by_one() -> None:
    js = "\n".join([*GOOD, "Please enable JavaScript in your browser to see this page properly."])
    assert run("c4", js, filter_javascript=False).text == js
    policy = "\n".join([*GOOD, "Read our privacy policy before you sign up for the service."])
    assert run("c4", policy, filter_policy=False).text == policy
    short = "\n".join([*GOOD, "Yes it is."])
    assert run("c4", short, min_words_per_line=3).text == short
    loose = "\n".join([*GOOD, "No punctuation at the end of this line here"])
    assert run("c4", loose, filter_no_terminal_punct=False).text == loose
    assert (
        run(
            "c4", "\n".join([*GOOD, "Lorem ipsum dolor sit amet, consectetur."]), filter_lorem_ipsum=False
        ).reason
        is None
    )
    cited = GOOD[0] + "[12]\n" + GOOD[1]
    assert run("c4", cited, remove_citations=False).text == cited
    # datatrove's C4QualityFilter ends lines with ' too; C4 as released does not.
    quoted = "\n".join([*GOOD, "He said it was 'the best day of his life'"])
    assert run("c4", quoted).edits == {"c4.lines_removed": 1}
    assert run("c4", quoted, end_punctuation=[".", "?", "!", '"', "'"]).text == quoted


def test_c4_on_sentences_instead_of_lines() -> None:
    page = (
        "The committee met on Tuesday to discuss the budget. Several members raised concerns about the "
        "cost. Home | About\nAfter a long debate the proposal was accepted by a narrow margin. Read more "
        "about it in our news pages today. Click here"
    )
    v = run("c4", page, split_paragraph=False)
    assert v.text == (
        "The committee met on Tuesday to discuss the budget. Several members raised concerns about the cost. "
        "After a long debate the proposal was accepted by a narrow margin. Read more about it in our news pages today."
    )
    assert v.edits == {"c4.lines_removed": 2}  # "Home | About" and "Click here", each a sentence here


def test_c4_bad_words_from_a_list_file(tmp_path: Path) -> None:
    words = tmp_path / "en"
    words.write_text("# LDNOOBW-style list\nbadword\ntwo words\n")
    page = "\n".join(GOOD)
    assert run("c4", page, bad_words=str(words)).reason is None
    assert run("c4", page + "\nThey said Two  Words.", bad_words=str(words)).reason is None  # not the phrase
    assert run("c4", page.replace("budget", "BadWord"), bad_words=str(words)).reason == (
        "filter:c4.bad_words",
        "word='badword'",
    )
    assert run("c4", page.replace("budget", "badwords"), bad_words=str(words)).reason is None  # whole words
    assert (
        run("c4", page.replace("the cost", "two words"), bad_words=str(words)).reason[0]
        == "filter:c4.bad_words"
    )  # type: ignore[index]


@pytest.mark.parametrize(
    ("line", "n"),
    [
        ("One sentence here.", 1),
        ("One. Two. Three!", 3),
        ("Is it? Yes! It is.", 3),
        ("Mr. Smith met Dr. Jones at 5 p.m. on Friday.", 1),
        ("The U.S. economy grew, e.g. in exports. Then it fell.", 2),
        ("J. R. R. Tolkien wrote it. He was a professor.", 2),
        ('He said "stop." Then he left.', 2),
        ("Pi is 3.14 or so. Roughly.", 2),
        ("Wait... what happened? Nothing... really.", 2),
        ("", 0),
    ],
)
def test_sentences_are_counted_as_punkt_splits_them(line: str, n: int) -> None:
    assert count_sentences(line) == n


# -------------------------------------------------------------------------------------- fineweb


def test_fineweb_rules_with_their_measurements() -> None:
    prose = "\n".join(GOOD)
    assert run("fineweb", prose).reason is None
    no_punct = "\n".join(f"line number {i} of a table without punctuation at all" for i in range(10))
    assert run("fineweb", no_punct).reason == (
        "filter:fineweb.line_punct_ratio",
        "line_punct_ratio=0.000 < 0.12",
    )
    assert run("fineweb", no_punct, line_punct_exclude_zero=True).reason != run("fineweb", no_punct).reason
    short = "\n".join([*GOOD, *[f"Item {i}." for i in range(7)]])
    assert run("fineweb", short).reason == (
        "filter:fineweb.short_line_ratio",
        "short_line_ratio=0.700 >= 0.67",
    )
    repeated = "\n".join([*GOOD, GOOD[0]])
    reason = run("fineweb", repeated).reason
    assert reason is not None and reason[0] == "filter:fineweb.char_dup_ratio"
    assert reason[1] == f"char_dup_ratio={len(GOOD[0]) / (len(repeated) - 3):.4f} >= 0.01"
    assert run("fineweb", repeated, char_duplicates_ratio=0.5).reason is None
    listy = "\n".join(f"{w}!" for w in ("Shoes", "Hats", "Socks", "Coats", "Bags", "Belts"))
    assert run("fineweb", listy, short_line_length=3).reason == (
        "filter:fineweb.list_ratio",
        "new_line_ratio=0.417 > 0.3",  # 5 newlines over 12 words (a word and its "!" per line)
    )
    assert run("fineweb", " \n\n").reason == ("filter:fineweb.empty", "non-blank lines=0")


# ------------------------------------------------------------------------------------------- url


@pytest.fixture
def lists(tmp_path: Path) -> dict[str, str]:
    ut1 = tmp_path / "blacklists" / "adult"
    ut1.mkdir(parents=True)
    (ut1 / "domains").write_text("badsite.com\nwww.onlywww.org\n")
    (ut1 / "urls").write_text("example.org/private/page\n")
    subs = tmp_path / "subs.txt"
    subs.write_text("casino\nfree-pills\n")
    extra = tmp_path / "domains.txt.gz"
    extra.write_bytes(gzip.compress(b"# ours\nspam.net\n"))
    return {"ut1": str(ut1), "subs": str(subs), "extra": str(extra)}


def test_url_block_lists(lists: dict[str, str]) -> None:
    chain = FilterChain(
        FiltersConfig(
            [
                {
                    "name": "url",
                    "lists": [lists["ut1"]],
                    "substrings": [lists["subs"]],
                    "domains": [lists["extra"]],
                }
            ]
        )
    )

    def reason(url: str | None) -> tuple[str, str] | None:
        return chain.run("text", "web", {} if url is None else {"url": url}).reason

    ut1 = lists["ut1"]
    assert reason("https://badsite.com/x") == (
        "filter:url.domain",
        f"host=badsite.com matches 'badsite.com' in {ut1}",
    )
    assert reason("http://cdn.eu.BadSite.com:8080/x")[1].startswith(
        "host=cdn.eu.badsite.com matches 'badsite.com'"
    )  # type: ignore[index]
    assert reason("http://notbadsite.com/") is None
    assert reason("http://www.onlywww.org/a")[0] == "filter:url.domain"  # type: ignore[index]
    assert reason("http://onlywww.org/a") is None  # a listed www. host does not block its parent
    assert reason("https://spam.net/")[1].endswith(lists["extra"])  # type: ignore[index]
    assert reason("https://www.example.org/private/page/") == (
        "filter:url.url",
        f"url=https://www.example.org/private/page/ listed in {ut1}",
    )
    assert reason("https://example.org/private/page2") is None
    assert reason("https://shop.example/Free-Pills/offer") == (
        "filter:url.substring",
        f"url=https://shop.example/Free-Pills/offer holds 'free-pills' from {lists['subs']}",
    )
    assert reason(None) is None
    strict = FiltersConfig([{"name": "url", "substrings": [lists["subs"]], "missing_url": "remove"}])
    assert FilterChain(strict).run("t", "web", {}).reason == (
        "filter:url.missing_url",
        "no 'url' in the record's metadata",
    )


def test_url_list_errors_name_the_file(tmp_path: Path) -> None:
    def error(**settings: Any) -> str:
        with pytest.raises(ConfigError) as e:
            FilterChain(FiltersConfig([{"name": "url", **settings}]))
        return str(e.value)

    assert "no block list given" in error()
    assert f"list file {tmp_path / 'nope'} does not exist" in error(domains=[str(tmp_path / "nope")])
    (tmp_path / "empty").write_text("\n# nothing\n")
    assert f"list file {tmp_path / 'empty'} has no entries" in error(domains=[str(tmp_path / "empty")])
    (tmp_path / "latin1").write_bytes(b"ok.com\ncaf\xe9.fr\n")
    assert f"list file {tmp_path / 'latin1'}, line 2: not UTF-8" in error(urls=[str(tmp_path / "latin1")])
    (tmp_path / "cat").mkdir()
    assert "is not a UT1 category directory" in error(lists=[str(tmp_path / "cat")])
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    assert "is not valid gzip" in error(substrings=[str(tmp_path / "bad.gz")])


# ------------------------------------------------------------------------------------------- pii


def test_pii_redacts_and_counts() -> None:
    text = (
        "Write to jane.doe+news@mail.example.co.uk or admin@[8.8.4.4]. Our server is 93.184.216.34, "
        "the router 192.168.1.1 and localhost 127.0.0.1. Version 1.2.3.4.5 and 1234.5.6.7 are not IPs."
    )
    v = run("pii", text)
    assert v.reason is None
    assert v.text == (
        "Write to email@example.com or email@example.com. Our server is 0.0.0.0, "
        "the router 192.168.1.1 and localhost 127.0.0.1. Version 1.2.3.4.5 and 1234.5.6.7 are not IPs."
    )
    assert v.edits == {"pii.email": 2, "pii.ip": 1}
    every_ip = run("pii", text, public_ips_only=False, ip_placeholder="<IP>", email_placeholder="<EMAIL>")
    assert every_ip.text.count("<IP>") == 3 and every_ip.text.count("<EMAIL>") == 2
    assert run("pii", text, emails=False, ips=False).text == text
    assert run("pii", "Nothing personal here.").edits == {}


def test_pii_phones_only_when_asked() -> None:
    text = "Call (202) 555-0143, 202.555.0199 or +44 20 7946 0958; order 12345678 ships in 2-3 days."
    assert run("pii", text).text == text
    v = run("pii", text, phones=True)
    assert v.text == "Call <PHONE>, <PHONE> or <PHONE>; order 12345678 ships in 2-3 days."
    assert v.edits == {"pii.phone": 3}


# ----------------------------------------------------------------------------------------- chain


def test_an_edit_reaches_the_filters_after_it() -> None:
    page = "\n".join([*GOOD, "Menu", "Login", "Home", "Search", "Cart", "Help", "About"])
    # fineweb alone removes the page for its short lines (7 of 10); after c4 has dropped them it keeps it.
    assert run("fineweb", page).reason is not None
    chain = FilterChain(FiltersConfig(["c4", "fineweb", {"name": "pii", "phones": True}]))
    v = chain.run(page + "\nCall me at 202-555-0143 any time you like, day or night.", "web")
    assert v.reason is None and "Menu" not in v.text and "<PHONE>" in v.text
    assert v.edits == {"c4.lines_removed": 7, "pii.phone": 1}
    again = pickle.loads(pickle.dumps(chain)).run(page, "web")
    assert again.text == chain.run(page, "web").text


# -------------------------------------------------------------------------------------- in ingest


def test_ingest_writes_redacted_text_and_counts_edits(tmp_path: Path, lists: dict[str, str]) -> None:
    page = "\n".join([*GOOD, "Contact: jane@example.com or call us.", "Menu"])
    lines = [
        pile_line(page, "CC", url="https://good.org/a"),
        pile_line(page.replace("jane", "joe"), "CC", url="https://www.badsite.com/b"),
        pile_line("Menu\nLogin", "CC", url="https://good.org/c"),
    ]
    src = write_zst(tmp_path / "web.jsonl.zst", b"".join(lines))
    filters = ["c4", {"name": "url", "lists": [lists["ut1"]]}, "pii"]
    cfg = IngestConfig(
        sources=[SourceSpec(name="web", glob=str(src))], langid={"enabled": False}, filters=filters
    )
    res = stage.run_ingest(str(tmp_path / "out"), cfg)
    docs = list(dataset.iter_documents(res.out))
    assert [d["text"] for d in docs] == ["\n".join([*GOOD, "Contact: email@example.com or call us."])]
    stats = res.manifest.stats.per_source["CC"]  # type: ignore[union-attr]
    assert stats.removed == {"filter:c4.too_few_sentences": 1, "filter:url.domain": 1}
    assert stats.edits == {"c4.lines_removed": 1, "pii.email": 1}
    removed = {r["reason"]: r["detail"] for r in dataset.read_removed(res.out).to_pylist()}
    assert removed["filter:url.domain"] == f"host=www.badsite.com matches 'badsite.com' in {lists['ut1']}"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["stats"]["per_source"]["CC"]["edits"] == {"c4.lines_removed": 1, "pii.email": 1}
    assert lists["ut1"] in cfg.extra_inputs()

    # The same setting, a different list: the run is redone, not skipped.
    (Path(lists["ut1"]) / "domains").write_text("good.org\n")
    again = stage.run_ingest(str(tmp_path / "out"), cfg)
    assert not again.skipped
    removed = {r["reason"]: r["detail"] for r in dataset.read_removed(again.out).to_pylist()}
    assert removed["filter:url.domain"] == f"host=good.org matches 'good.org' in {lists['ut1']}"
    assert [d["text"] for d in dataset.iter_documents(again.out)] == [
        "\n".join([*GOOD, "Contact: email@example.com or call us."])  # joe's page, from badsite.com
    ]


def test_ingest_refuses_a_missing_list_before_any_work(tmp_path: Path) -> None:
    src = write_zst(tmp_path / "a.jsonl.zst", pile_line("\n".join(GOOD), "CC", url="https://x.org/"))
    cfg = IngestConfig(
        sources=[SourceSpec(name="web", glob=str(src))],
        langid={"enabled": False},
        filters=[{"name": "url", "domains": [str(tmp_path / "missing.txt")]}],
    )
    with pytest.raises(ConfigError, match=r"filters\.url\.domains: list file .*missing\.txt does not exist"):
        stage.run_ingest(str(tmp_path / "out"), cfg)
    assert not (tmp_path / "out").exists()
