"""Hugging Face export: transformers' Llama reproduces selene's logits and sentencepiece's ids."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from selene.errors import ConfigError, InputError, PathError
from selene.eval.checkpoint_io import load_model, tokenizer
from selene.eval.export import export_hf, rope_permute
from tests.tiny_checkpoint import corpus_docs, make_checkpoint

TEXTS = [
    "Hello world",
    "The for statement\nis used to iterate",
    "  two leading spaces",
    "tabs\tand\nnewlines\n\n",
    "\nleading newline",
    "x  \n  y",
    "émoji 🎉 and 12345 digits, Ünïcödé ∑ 中文",
    "trailing space ",
    " ",
    "",
    "def f(x):\n    return x  # comment\n",
    "</s> literal eos and <unk>",
]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_checkpoint(tmp_path_factory.mktemp("export_ckpt"))


@pytest.fixture(scope="module")
def exported(ckpt: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = str(tmp_path_factory.mktemp("hf") / "model")
    summary = export_hf(ckpt, out)
    assert summary["tokenizer"] and summary["eos_token_id"] == 1
    assert {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json"} <= set(summary["files"])
    return out


def assert_same_logits(ckpt: str, out: str) -> None:
    from transformers import LlamaForCausalLM

    ours = load_model(ckpt)
    hf = LlamaForCausalLM.from_pretrained(out).eval()
    tokens = torch.randint(0, ours.args.vocab_size, (2, ours.args.max_seq_len), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = ours.model(tokens)
        got = hf(input_ids=tokens).logits
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=0)


def test_transformers_llama_gives_selene_logits(ckpt: str, exported: str) -> None:
    assert_same_logits(ckpt, exported)


def test_tokenizer_encodes_and_decodes_like_sentencepiece(ckpt: str, exported: str) -> None:
    from transformers import AutoTokenizer

    sp = tokenizer(ckpt)
    hf = AutoTokenizer.from_pretrained(exported)
    assert hf.eos_token_id == 1 and hf.bos_token_id is None
    for text in TEXTS + corpus_docs(79):
        ids = sp.encode(text)
        assert hf.encode(text) == ids, text  # add_special_tokens default: no BOS/EOS added
        assert hf.decode(ids) == sp.decode(ids), text


def test_export_is_readable_like_every_other_output(exported: str) -> None:
    """Modes by the umask (0755 / 0644 under 022), not the temporary folder's 0700 or a 0600 file:
    another user of a shared machine can load it."""
    import os
    import stat

    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(exported).st_mode) == 0o777 & ~mask
    for name in os.listdir(exported):
        assert stat.S_IMODE(os.stat(os.path.join(exported, name)).st_mode) == 0o666 & ~mask, name


def test_rope_permutation_maps_interleaved_pairs_to_halves() -> None:
    head_dim, n_heads = 6, 2
    rows = torch.arange(n_heads * head_dim, dtype=torch.float32)[:, None]
    got = rope_permute(rows, n_heads)[:, 0].tolist()
    # per head: even rows (first of each pair) first, then odd rows
    assert got == [0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11]


def test_tied_embeddings_export(tmp_path: Path) -> None:
    ckpt = make_checkpoint(tmp_path / "tied", tie_embeddings=True)
    out = str(tmp_path / "hf")
    export_hf(ckpt, out)
    import json

    assert json.loads((Path(out) / "config.json").read_text())["tie_word_embeddings"] is True
    from safetensors import safe_open

    with safe_open(str(Path(out) / "model.safetensors"), "pt") as f:
        assert "lm_head.weight" not in set(f.keys())
    assert_same_logits(ckpt, out)


def test_gelu_layernorm_model_is_refused(tmp_path: Path) -> None:
    ckpt = make_checkpoint(tmp_path / "gpt", norm="layernorm", positions="learned", mlp="gelu")
    with pytest.raises(ConfigError, match="only the Llama-style architecture"):
        export_hf(ckpt, str(tmp_path / "hf"))
    assert not (tmp_path / "hf").exists()


def test_non_checkpoint_paths_are_refused(tmp_path: Path, ckpt: str) -> None:
    with pytest.raises(PathError, match="not a directory"):
        export_hf(str(tmp_path / "missing"), str(tmp_path / "hf"))
    (tmp_path / "empty" / "step-000001").mkdir(parents=True)
    with pytest.raises(PathError, match=r"step-000001/meta.json \(an interrupted save"):
        export_hf(str(tmp_path / "empty"), str(tmp_path / "hf"))
    assert not (tmp_path / "hf").exists()


def test_existing_output_needs_overwrite(ckpt: str, tmp_path: Path) -> None:
    out = tmp_path / "hf"
    out.mkdir()
    (out / "junk").write_text("x")
    with pytest.raises(PathError, match="give --overwrite to replace a previous export"):
        export_hf(ckpt, str(out))
    with pytest.raises(PathError, match="not a selene export"):  # --overwrite replaces only an export
        export_hf(ckpt, str(out), overwrite=True)
    (out / "junk").unlink()
    export_hf(ckpt, str(out))
    (out / "junk").write_text("x")
    export_hf(ckpt, str(out), overwrite=True)
    assert not (out / "junk").exists() and (out / "model.safetensors").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["hf"]  # no temporary directories left behind


def test_missing_or_mismatched_tokenizer_is_named(ckpt: str, tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(Path(ckpt).parent.parent, run)  # the train dir: checkpoints/ and tokenizer.model
    (run / "tokenizer.model").unlink()
    with pytest.raises(InputError, match=r"tokenizer\.model"):
        load_model(str(run))
    import sentencepiece as spm

    from selene.tokenize.config import TokenizeConfig
    from selene.tokenize.spm import train
    from tests.tiny_checkpoint import corpus_lines

    (run / "tokenizer.model").write_bytes(train(iter(corpus_lines()), TokenizeConfig(vocab_size=400)))
    assert spm.SentencePieceProcessor(model_file=str(run / "tokenizer.model")).vocab_size() == 400
    with pytest.raises(ConfigError, match=r"400 pieces .* says 512"):
        tokenizer(str(run / "checkpoints"))


def test_export_without_permutation_would_differ(ckpt: str) -> None:
    """Guards the RoPE finding: q/k rows in selene's interleaved order do not fit transformers' rotate_half."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from selene.eval import export

    ours = load_model(ckpt)
    state = export.hf_state_dict(ours.model, ours.args)
    for name in list(state):  # undo the permutation
        if name.endswith(("q_proj.weight", "k_proj.weight")):
            state[name] = ours.model.state_dict()[name.replace("model.", "").replace("self_attn.q_proj", "attention.wq")
                                                   .replace("self_attn.k_proj", "attention.wk")]
    a = ours.args
    hf = LlamaForCausalLM(LlamaConfig(vocab_size=a.vocab_size, hidden_size=a.dim, intermediate_size=a.ffn_dim,
                                      num_hidden_layers=a.n_layers, num_attention_heads=a.n_heads,
                                      rms_norm_eps=a.norm_eps, max_position_embeddings=a.max_seq_len)).eval()
    hf.load_state_dict(state)
    tokens = torch.randint(0, a.vocab_size, (1, 32), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert (hf(input_ids=tokens).logits - ours.model(tokens)).abs().max() > 1e-3


def test_harness_hf_model_on_the_export_scores_like_the_selene_adapter(tmp_path: Path) -> None:
    """The harness's own `hf` model on the exported directory and selene's adapter on the checkpoint
    give the same metrics on the same task documents."""
    import lm_eval

    from selene.eval import harness
    from selene.eval.export import export_hf
    from tests.tiny_checkpoint import make_checkpoint

    # a context long enough for every request: the hf adapter refuses continuations longer than it
    ckpt = make_checkpoint(tmp_path / "ck", max_seq_len=256)
    hf_dir = tmp_path / "hf"
    export_hf(ckpt, str(hf_dir))
    ours = harness.evaluate(ckpt, ["selene_piqa", "selene_hellaswag"], out_dir=str(tmp_path / "ours"), limit=8, log_samples=False)
    out = (tmp_path / "theirs").resolve()
    harness._offline(out)
    manager = harness._task_manager([harness.TASKS_DIR], out)
    theirs = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={hf_dir},dtype=float32,max_length=256", tasks=["selene_piqa", "selene_hellaswag"],
        limit=8, task_manager=manager, bootstrap_iters=0, device="cpu", batch_size=4,
    )
    assert theirs is not None
    for task in ("selene_piqa", "selene_hellaswag"):
        for metric in ("acc,none", "acc_norm,none"):
            assert theirs["results"][task][metric] == pytest.approx(ours["results"][task][metric], abs=1e-9), (task, metric)
