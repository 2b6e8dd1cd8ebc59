"""`selene tokenize` options that contradict each other are refused, and a blend planned in another
tokenizer's tokens is warned about: neither may change the output silently."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from selene.cli import main
from tests.ingest.test_ingest import build_corpus


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--tokenizer", "tok.model", "--vocab-size", "1000"],
            "tokenizer (--tokenizer) and vocab_size (--vocab-size) = 1000 conflict",
        ),
        (
            ["--tokenizer", "tok.model", "--model-type", "unigram"],
            "tokenizer (--tokenizer) and model_type (--model-type) = 'unigram' conflict",
        ),
        (
            ["--tokenizer", "tok.model", "--allow-smaller-vocab"],
            "allow_smaller_vocab (--allow-smaller-vocab) = True conflict",
        ),
        (["--eod-token", "<eos>"], "eod_token (--eod-token) = '<eos>' needs tokenizer (--tokenizer)"),
    ],
)
def test_conflicting_options_are_refused_naming_both(
    tmp_path: Path, args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tok.model").write_bytes(b"")
    out = tmp_path / "out"
    args = [str(tmp_path / a) if a == "tok.model" else a for a in args]
    assert main(["tokenize", "-i", str(tmp_path), "-o", str(out), *args]) == 2
    err = flat(capsys.readouterr().err)
    assert said in err and "Traceback" not in err
    assert not out.exists()


def test_conflicting_settings_in_a_pipeline_file_name_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "pipe.yaml"
    p.write_text("run_dir: r\ntokenize:\n  tokenizer: m.model\n  vocab_size: 1000\n")
    assert main(["config", "validate", str(p)]) == 2
    err = flat(capsys.readouterr().err)
    assert "tokenize (line 2)" in err and "vocab_size (--vocab-size) = 1000 conflict" in err
    p.write_text("run_dir: r\ntokenize:\n  tokenizer: m.model\n  vocab_size: 32000\n  eod_piece: </s>\n")
    assert main(["config", "validate", str(p)]) == 0  # a default spelled out is no conflict


def test_a_blend_counted_with_another_tokenizer_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_corpus(tmp_path / "corpus")
    c = tmp_path / "corpus"
    sources = ["--source", f"pile={c}/pile/*.jsonl.zst", "--source", f"cc={c}/web/*.warc.gz"]
    ing, blend = tmp_path / "ingest", tmp_path / "blend"
    assert main(["ingest", "-o", str(ing), *sources]) == 0
    assert main(["tokenize", "-i", str(ing), "-o", str(tmp_path / "a"), "--vocab-size", "600"]) == 0
    model_a = str(tmp_path / "a" / "tokenizer.model")
    blend_args = [
        "--weights",
        "Books3=0.5,ArXiv=0.3,cc=0.2",
        "--target-tokens",
        "2000",
        "--tokenizer",
        model_a,
    ]
    assert main(["blend", "-i", str(ing), "-o", str(blend), *blend_args]) == 0
    capsys.readouterr()

    assert main(["tokenize", "-i", str(blend), "-o", str(tmp_path / "b"), "--vocab-size", "400"]) == 0
    err = flat(capsys.readouterr().err)
    m = re.search(
        rf"warning: tokenize: the blend {blend} counted its mix with {model_a} as ([\d,]+) tokens, target_tokens 2,000; "
        rf"tokenize made ([\d,]+) tokens of it \(EOD excluded\) with {tmp_path / 'b' / 'tokenizer.model'} \(trained here\): ([\d.]+)x",
        err,
    )
    assert m, err
    counted, made = (int(g.replace(",", "")) for g in m.groups()[:2])
    assert made > counted  # a smaller vocabulary cuts the same text into more pieces
    assert main(["tokenize", "-i", str(blend), "-o", str(tmp_path / "b"), "--vocab-size", "400"]) == 0
    assert f"warning: tokenize: the blend {blend} counted its mix with {model_a}" in flat(
        capsys.readouterr().out
    )

    assert main(["tokenize", "-i", str(blend), "-o", str(tmp_path / "c"), "--tokenizer", model_a]) == 0
    assert "warning" not in capsys.readouterr().err  # the blend's own tokenizer: the plan holds
