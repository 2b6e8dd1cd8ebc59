"""The filter registry and the two config forms: which filters run, in which order, with what."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from pydantic import ValidationError

from selene.config import dump_config
from selene.config.pipeline import load_pipeline_config, load_stage_config
from selene.errors import ConfigError
from selene.ingest import stage
from selene.ingest.config import IngestConfig, SourceSpec
from selene.ingest.filters import (
    Filter,
    FilterChain,
    FiltersConfig,
    GopherQualityFilter,
    LengthFilter,
    filter_names,
    get_filter,
    register_filter,
    registry,
)
from selene.ingest.filters.spec import DEFAULT_FILTERS
from selene.io import dataset
from tests.corpus import pile_line, write_zst
from tests.custom_filter import MaxDigits, RejectAll
from tests.ingest.test_filters import PROSE, SENTENCES

ROOT = Path(__file__).resolve().parents[2]
KNOWN = "known: length, gopher_quality, gopher_repetition, c4, fineweb, pii, url, or your own as module:Class"


def ingest_error(tmp_path: Path, filters_yaml: str) -> str:
    """The ConfigError message of a pipeline file whose `ingest.filters` is `filters_yaml`."""
    p = tmp_path / "c.yaml"
    p.write_text("run_dir: r\ningest:\n  filters:\n" + filters_yaml)
    with pytest.raises(ConfigError) as e:
        load_pipeline_config(p)
    return str(e.value)


# ------------------------------------------------------------------------------------- registry


def test_builtins_are_registered_in_default_order() -> None:
    assert filter_names()[:3] == list(DEFAULT_FILTERS)
    assert get_filter("length") is LengthFilter and LengthFilter.Config is LengthFilter.Config
    assert get_filter("tests.custom_filter:MaxDigits") is MaxDigits
    assert RejectAll.name == "RejectAll"  # a filter without a name is named after its class


def test_register_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @register_filter
    class NoDigits(Filter):
        name = "no_digits"

        def filter(self, doc):  # type: ignore[no-untyped-def]
            return self.reject("any", "digits") if any(map(str.isdigit, doc.text)) else None

    chain = FilterChain(FiltersConfig(["no_digits"]))
    assert chain.check("in 1859", "web") == ("filter:no_digits.any", "digits")
    with pytest.raises(ValueError, match="the name 'length' is taken"):
        register_filter(type("Other", (Filter,), {"name": "length"}))
    with pytest.raises(TypeError, match="not a subclass"):
        register_filter(dict)  # type: ignore[type-var]


# ------------------------------------------------------------------------------------ the forms


def test_mapping_form_is_the_default_chain_with_overrides() -> None:
    default = FiltersConfig()
    assert [s.name for s in default] == list(DEFAULT_FILTERS)
    assert FiltersConfig({}) == default == IngestConfig().filters
    assert FiltersConfig({"gopher_repetition": {}, "length": None}) == default  # key order does not matter
    assert FiltersConfig.model_validate([{"name": n} for n in DEFAULT_FILTERS]) == default
    # today's Python form and YAML form
    off = FiltersConfig(gopher_quality=GopherQualityFilter.Config(enabled=False))
    assert off == FiltersConfig({"gopher_quality": {"enabled": False}})
    assert off["gopher_quality"].enabled is False and off["length"] == LengthFilter.Config()


def test_demo_config_resolves_to_the_list_it_prints() -> None:
    cfg = load_pipeline_config(ROOT / "configs" / "demo.yaml").ingest
    assert [s.name for s in cfg.filters] == list(DEFAULT_FILTERS)
    assert cfg.filters["gopher_quality"] == GopherQualityFilter.Config(exclude_sources=["Github"])
    dumped = cfg.model_dump(mode="json")
    assert dumped["filters"][1] == {"name": "gopher_quality", **GopherQualityFilter.Config(exclude_sources=["Github"]).model_dump()}
    again = IngestConfig.model_validate(json.loads(json.dumps(dumped)))
    assert again == cfg and again.model_dump(mode="json") == dumped  # deterministic, round-trips


def test_defaults_print_the_resolved_list() -> None:
    text = dump_config(IngestConfig())
    assert "filters:\n- name: length\n  enabled: true\n  exclude_sources: []\n  min_words: 5\n" in text
    assert "- name: gopher_repetition\n" in text


def test_list_form_chooses_the_filters_and_their_order() -> None:
    text = SENTENCES[0]  # 30-odd words: fails gopher_quality.min_words (50), and length at min_words=40
    quality_first = FiltersConfig(["gopher_quality", {"name": "length", "min_words": 40}])
    length_first = FiltersConfig([{"name": "length", "min_words": 40}, "gopher_quality"])
    assert FilterChain(quality_first).check(text, "web")[0] == "filter:gopher_quality.min_words"  # type: ignore[index]
    assert FilterChain(length_first).check(text, "web")[0] == "filter:length.min_words"  # type: ignore[index]
    repeated = "\n".join([PROSE] * 3)  # only gopher_repetition rejects it, and it is not listed
    assert FilterChain(FiltersConfig(["length", "gopher_quality"])).check(repeated, "web") is None
    assert FilterChain(FiltersConfig([])).check("", "web") is None


def test_enabled_false_skips_the_filter() -> None:
    text = SENTENCES[0]
    assert FilterChain(FiltersConfig([{"name": "gopher_quality", "enabled": False}])).check(text, "web") is None
    chain = FilterChain(FiltersConfig([{"name": "tests.custom_filter:RejectAll", "enabled": False}, "length"]))
    assert [type(f) for f in chain.filters] == [LengthFilter]  # a disabled filter is not even built
    assert chain.check(text, "web") is None


def test_custom_filter_by_import_path() -> None:
    cfg = FiltersConfig([{"name": "tests.custom_filter:MaxDigits", "max_ratio": 0.1}, "gopher_quality"])
    chain = FilterChain(cfg)
    table = "The figures of 1837, 1844 and 1859: 12 34 56 78 90 12 34 56 78 90."
    assert chain.check(table, "web") == ("filter:max_digits.ratio", "digit_ratio=0.485 > 0.1")  # 32 of 66
    assert chain.check(PROSE, "web") is None
    assert pickle.loads(pickle.dumps(chain)).check(table, "web") == chain.check(table, "web")
    # in the mapping form it runs after the default chain; exclude_sources works as for any filter
    mapped = FilterChain(FiltersConfig({"tests.custom_filter:RejectAll": {"exclude_sources": ["Github"]}}))
    assert [type(f) for f in mapped.filters][:2] == [LengthFilter, GopherQualityFilter]
    assert mapped.check(PROSE, "web") == ("filter:RejectAll.all", f"chars={len(PROSE)}")
    assert mapped.check(PROSE, "Github") is None


def test_custom_filter_reasons_reach_removed_parquet(tmp_path: Path) -> None:
    digits = " ".join(str(n) for n in range(400))
    write_zst(tmp_path / "a.jsonl.zst", pile_line(PROSE, "S") + pile_line(f"Numbers follow. {digits}", "S"))
    cfg = IngestConfig(
        sources=[SourceSpec(name="x", glob=str(tmp_path / "a.jsonl.zst"))],
        langid={"enabled": False},
        filters=[{"name": "tests.custom_filter:MaxDigits", "max_ratio": 0.5}, "length"],
    )
    res = stage.run_ingest(str(tmp_path / "out"), cfg)
    removed = dataset.read_removed(res.out).to_pylist()
    assert [(r["reason"], r["detail"][:14]) for r in removed] == [("filter:max_digits.ratio", "digit_ratio=0.")]
    assert res.manifest is not None and res.manifest.config["filters"][0]["name"] == "tests.custom_filter:MaxDigits"


# ----------------------------------------------------------------------------------------- errors


def test_bad_import_path_names_the_field_and_the_path(tmp_path: Path) -> None:
    msg = ingest_error(tmp_path, "    - length\n    - name: 'tests.nope:MyFilter'\n")
    assert "ingest.filters.1.name (line 5): got 'tests.nope:MyFilter'" in msg
    assert "cannot import module 'tests.nope'" in msg
    msg = ingest_error(tmp_path, "    - name: 'tests.custom_filter:Nope'\n")
    assert "ingest.filters.0.name (line 4)" in msg and "has no attribute 'Nope'" in msg
    msg = ingest_error(tmp_path, "    'tests.custom_filter:not_a_filter': {}\n")
    assert "ingest.filters.tests.custom_filter:not_a_filter (line 4)" in msg
    assert "is not a filter: expected a subclass of selene.ingest.filters.Filter, got a function" in msg
    assert "an import path is module:Class" in ingest_error(tmp_path, "    - 'tests.custom_filter:'\n")


def test_unknown_filter_name_lists_the_known_ones(tmp_path: Path) -> None:
    msg = ingest_error(tmp_path, "    - name: lenght\n")
    assert "ingest.filters.0.name (line 4): got 'lenght': unknown filter 'lenght'" in msg and KNOWN in msg
    msg = ingest_error(tmp_path, "    lenght: {min_words: 3}\n")
    assert "ingest.filters.lenght (line 4): got 'lenght': unknown filter 'lenght'" in msg and KNOWN in msg
    with pytest.raises(ConfigError, match=KNOWN):
        get_filter("lenght")


def test_bad_settings_name_the_field_and_the_filters_keys(tmp_path: Path) -> None:
    msg = ingest_error(tmp_path, "    gopher_quality:\n      min_wrods: 3\n")
    assert "ingest.filters.gopher_quality.min_wrods (line 5): got 3: unknown key of filter gopher_quality" in msg
    assert "accepted keys here: enabled, exclude_sources, min_words, max_words," in msg
    msg = ingest_error(tmp_path, "    - {name: length, min_wrods: 3}\n")
    assert "ingest.filters.0.min_wrods (line 4)" in msg
    assert "accepted keys here: name, enabled, exclude_sources, min_words, max_words, min_chars, max_chars" in msg
    msg = ingest_error(tmp_path, "    - name: tests.custom_filter:MaxDigits\n      max_ratio: 2\n")
    assert "ingest.filters.0.max_ratio (line 5): got 2: Input should be less than or equal to 1" in msg
    assert "ingest.filters.0.name (line 4): Field required" in ingest_error(tmp_path, "    - {min_words: 3}\n")
    assert "repeated: length" in ingest_error(tmp_path, "    [length, {name: length}]\n")
    p = tmp_path / "stage.yaml"  # a file of ingest settings alone
    p.write_text("filters:\n  - name: length\n    min_words: many\n")
    with pytest.raises(ConfigError, match=r"filters\.0\.min_words \(line 3\): got 'many'"):
        load_stage_config(p, IngestConfig, "ingest")
    with pytest.raises(ValidationError, match=r"filter length takes a LengthFilter\.Config, not a GopherQualityFilter\.Config"):
        FiltersConfig({"length": GopherQualityFilter.Config()})
