"""The lm-eval adapter, the offline harness run over selene's local tasks, and held-out perplexity.

One tiny real checkpoint (tests.tiny_checkpoint) serves every test; scores are checked against a
direct computation with the model, so a wrong token boundary or an off-by-one shift fails loudly.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from selene.errors import ConfigError
from tests.tiny_checkpoint import make_checkpoint

ALL_TASKS = ["selene_cloze", "selene_piqa", "selene_hellaswag", "selene_firstword"]


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> str:
    return make_checkpoint(tmp_path_factory.mktemp("ckpt"))


@pytest.fixture(scope="module")
def lm(ckpt: str) -> Any:
    from selene.eval.lm import SeleneLM

    return SeleneLM(ckpt, batch_size=3, device="cpu")  # the tests compare with CPU tensors


def _inst(kind: str, *args: Any) -> Any:
    from lm_eval.api.instance import Instance

    return Instance(request_type=kind, doc={}, arguments=args, idx=0)


def _direct(lm: Any, ctx: list[int], cont: list[int]) -> float:
    """Sum of log p(cont | ctx) from one unbatched forward pass (no truncation needed here)."""
    toks = torch.tensor([ctx + cont])
    with torch.no_grad():
        lp = F.log_softmax(lm.model(toks[:, :-1]).float(), dim=-1)[0]
    idx = torch.arange(len(ctx) - 1, len(ctx) + len(cont) - 1)
    return float(lp[idx, torch.tensor(cont)].sum())


def test_loglikelihood_matches_direct_computation(lm: Any) -> None:
    sp = lm.tok
    cases = [
        ("The function returns a val", "ue of the"),  # boundary inside a word
        ("A class definition is an ", "executable statement."),  # trailing space moves to the continuation
        ("", "The import statement"),  # empty context: conditioned on EOD
    ]
    got = lm.loglikelihood([_inst("loglikelihood", c, x) for c, x in cases])
    for (ctx, cont), (lp, _) in zip(cases, got, strict=True):
        if ctx:
            stripped = ctx.rstrip(" ")
            whole, head = sp.encode(stripped + ctx[len(stripped) :] + cont), sp.encode(stripped)
            expected = _direct(lm, head, whole[len(head) :])
        else:
            expected = _direct(lm, [lm.eot_token_id], sp.encode(cont))
        assert lp == pytest.approx(expected, abs=1e-4), (ctx, cont)
    # the in-word boundary really is one the separate encodings would get wrong
    assert sp.encode("The function returns a value of the")[
        len(sp.encode("The function returns a val")) :
    ] != sp.encode("ue of the")


def test_is_greedy(lm: Any) -> None:
    ctx = lm.tok.encode("The return statement may only occur")
    seq = list(ctx)
    with torch.no_grad():
        for _ in range(3):
            seq.append(int(lm.model(torch.tensor([seq]))[0, -1].argmax()))
    greedy = seq[len(ctx) :]
    other = [*greedy[:2], (greedy[2] + 1) % lm.args.vocab_size]
    (lp_g, is_g), (lp_o, is_o) = lm._loglikelihood_tokens([(None, ctx, greedy), (None, ctx, other)])
    assert is_g is True and is_o is False
    assert lp_g > lp_o


def test_rolling_equals_per_token_sum_and_long_continuations(lm: Any) -> None:
    short = "Names refer to objects."
    toks = lm.tok.encode(short)
    assert len(toks) < lm.max_length
    (rolling,) = lm.loglikelihood_rolling([_inst("loglikelihood_rolling", short)])
    assert rolling == pytest.approx(_direct(lm, [lm.eot_token_id], toks), abs=1e-4)
    # a text longer than the context: rolling windows and the long-continuation pieces agree
    long = " ".join(["Objects are Python's abstraction for data, and every object has an identity."] * 6)
    assert len(lm.tok.encode(long)) > 2 * lm.max_length
    (r_long,) = lm.loglikelihood_rolling([_inst("loglikelihood_rolling", long)])
    ((ll_long, _),) = lm.loglikelihood([_inst("loglikelihood", "", long)])
    assert r_long == pytest.approx(ll_long, rel=1e-5)


def _score_full_reference(lm: Any, requests: list[Any]) -> list[tuple[float, bool]]:
    """`SeleneLM._score` as it was: the log-softmax of the whole batch (B, T, V) copied to the host,
    each request's continuation gathered there. Same batches, same order as `_score`."""
    from lm_eval.models.utils import Collator

    collator = Collator(requests, sort_fn=lambda r: (-len(r[1] + r[2]), tuple(r[1] + r[2])), group_by=None)
    results: list[tuple[float, bool]] = []
    for chunk in collator.get_batched(n=lm.batch_size):
        inputs = [(ctx + cont)[-(lm.max_length + 1) :][:-1] for _, ctx, cont in chunk]
        with torch.no_grad():
            logprobs = F.log_softmax(lm._logits(inputs).float(), dim=-1).cpu()
        for (_, _, cont), inp, lp in zip(chunk, inputs, logprobs, strict=True):
            window = lp[len(inp) - len(cont) : len(inp)]
            target = torch.tensor(cont, dtype=torch.long)
            total = float(window.gather(1, target[:, None]).sum())
            results.append((total, bool((window.argmax(dim=-1) == target).all())))
    return list(collator.get_original(results))


def test_device_side_scoring_equals_the_full_log_softmax(lm: Any) -> None:
    """`_score` computes on the model's device only what a request needs (its continuation's
    log-softmax, the sum, the greedy check) and copies two numbers back: the very same float32 numbers
    as the full log-softmax on the host, for continuations of every length, truncated contexts, greedy
    ones and rolling windows."""
    from lm_eval.utils import get_rolling_token_windows, make_disjoint_window

    enc = lm.tok.encode
    ctx = enc("The return statement may only occur")
    seq = list(ctx)
    with torch.no_grad():
        for _ in range(4):
            seq.append(int(lm.model(torch.tensor([seq]))[0, -1].argmax()))
    long = enc(" ".join(["Objects are Python's abstraction for data."] * 8))
    assert len(long) > lm.max_length
    requests: list[Any] = [
        (None, ctx, seq[len(ctx) :]),  # greedy: True
        (None, ctx, [seq[len(ctx)], (seq[len(ctx) + 1] + 1) % lm.args.vocab_size]),  # not greedy
        (None, [lm.eot_token_id], enc("Names refer to objects.")),
        (None, enc("A class definition is an"), enc(" executable statement.")),
        (None, long, enc(" The end.")),  # context left-truncated
        (None, ctx, [7]),  # one token
    ]
    requests += [
        (None, c, x)
        for c, x in map(
            make_disjoint_window,
            get_rolling_token_windows(long, prefix_token=lm.eot_token_id, max_seq_len=lm.max_length, context_len=1),
        )
    ]
    got = lm._score(requests)
    assert got == _score_full_reference(lm, requests)  # exactly: same float32 values, same sums
    assert got[0][1] is True and got[1][1] is False
    for (_, c, x), (lp, _) in zip(requests[:4], got[:4], strict=True):  # and the unbatched computation
        assert lp == pytest.approx(_direct(lm, c, x), abs=1e-4)


def test_evaluate_all_local_tasks(ckpt: str, tmp_path: Path) -> None:
    from selene.eval.harness import evaluate

    res = evaluate(ckpt, ALL_TASKS, out_dir=str(tmp_path), limit=5, batch_size=4)
    saved = json.loads((tmp_path / "results.json").read_text())
    expect = {
        "selene_cloze": ["acc,none", "perplexity,none"],
        "selene_piqa": ["acc,none", "acc_norm,none"],
        "selene_hellaswag": ["acc,none", "acc_norm,none"],
        "selene_firstword": ["exact_match,none"],
    }
    for task, metrics in expect.items():
        for m in metrics:
            assert isinstance(saved["results"][task][m], float), (task, m)
        assert saved["n-samples"][task]["effective"] == 5
    assert res["results"] == saved["results"]
    table = (tmp_path / "results.md").read_text()
    assert all(t in table for t in ALL_TASKS) and "acc_norm" in table and "exact_match" in table


def test_one_shot_examples_come_from_the_fewshot_split(ckpt: str, tmp_path: Path) -> None:
    from selene.eval.harness import TASKS_DIR, evaluate

    evaluate(ckpt, ["selene_cloze", "selene_firstword"], out_dir=str(tmp_path), num_fewshot=1, limit=4)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["n-shot"]["selene_cloze"] == 1
    train = [
        json.loads(x)["context"] for x in (TASKS_DIR / "selene_cloze.train.jsonl").read_text().splitlines()
    ]
    rows = [json.loads(x) for x in (tmp_path / "samples_selene_cloze.jsonl").read_text().splitlines()]
    assert len(rows) == 4
    for row in rows:
        prompt = row["arguments"][0][0]
        shot, _, scored = prompt.partition("\n\n")
        assert scored == row["doc"]["context"]
        assert any(shot.startswith(t) for t in train) and not shot.startswith(scored)


@pytest.mark.slow  # over 6 s: the full suite runs it, `make test-fast` leaves it out
def test_unknown_task_lists_close_matches(ckpt: str, tmp_path: Path) -> None:
    from selene.eval.harness import evaluate

    with pytest.raises(ConfigError, match="selene_piqa"):
        evaluate(ckpt, ["selene_piqaa"], out_dir=str(tmp_path))
    # a refused run leaves nothing behind: not the folder it would have made, not what was there before
    # not bundled, not in lm-eval's registry either (hellaswag itself is lm-eval's: `test_eval_registry`)
    with pytest.raises(ConfigError, match="unknown evaluation task 'hellaswagz'"):
        evaluate(ckpt, ["hellaswagz"], out_dir=str(tmp_path / "new"))
    assert not (tmp_path / "new").exists()
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError):
        evaluate(ckpt, ["hellaswagz"], out_dir=str(tmp_path / "old"))
    assert [p.name for p in (tmp_path / "old").iterdir()] == ["notes.txt"]


def test_heldout_perplexity(ckpt: str) -> None:
    from selene.eval.perplexity import heldout_perplexity

    res = heldout_perplexity(ckpt)
    assert res["documents"] >= 1 and res["tokens"] > 0
    assert res["perplexity"] == pytest.approx(math.exp(res["loss"]))
    assert res["bits_per_byte"] > 0
    # a barely-trained model is near uniform over the vocabulary, far from a perfect one
    assert 0.5 * math.log(lm_vocab(ckpt)) < res["loss"] < 2 * math.log(lm_vocab(ckpt))


def lm_vocab(ckpt: str) -> int:
    from selene.eval.checkpoint_io import read_meta, resolve

    return int(read_meta(resolve(ckpt))["model_args"]["vocab_size"])


def test_generate_until_stops_and_matches_the_fallback_loop(lm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    (free,) = lm.generate_until(
        [_inst("generate_until", "Names refer to", {"until": ["@@"], "max_gen_toks": 10})]
    )
    assert len(free) >= 4
    stop = free[2:4]  # a stop string the greedy continuation is known to contain
    reqs = [
        _inst("generate_until", "Names refer to", {"until": [stop], "max_gen_toks": 10}),
        _inst(
            "generate_until", "The import statement", {"until": ["@@"], "max_gen_toks": 6, "do_sample": False}
        ),
    ]
    cached = lm.generate_until(reqs)
    assert cached[0] == free[: free.index(stop)]

    def no_generator(name: str) -> Any:
        raise ImportError(name)

    monkeypatch.setattr("selene.eval.lm.importlib.import_module", no_generator)
    assert lm.generate_until(reqs) == cached  # greedy: the KV-cache generator and the plain loop agree


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_scoring_equals_the_cpu(ckpt: str, lm: Any) -> None:
    """On CUDA (device auto) the harness scores in float32 the same numbers as on the CPU, up to float
    rounding; the greedy flags agree, and so does held-out perplexity."""
    from selene.eval.lm import SeleneLM
    from selene.eval.perplexity import heldout_perplexity

    gpu = SeleneLM(ckpt, batch_size=3)  # device auto
    assert gpu._device.type == "cuda" and next(gpu.model.parameters()).dtype == torch.float32
    enc = lm.tok.encode
    requests = [(None, enc("The function returns a"), enc(" value of the")), (None, [lm.eot_token_id], enc("Names"))]
    long = enc(" ".join(["Objects are Python's abstraction for data."] * 8))
    requests.append((None, long, enc(" The end.")))
    got, want = gpu._score(requests), lm._score(requests)
    for (a, ga), (b, gb) in zip(got, want, strict=True):
        assert a == pytest.approx(b, abs=2e-3) and ga == gb
    (text,) = gpu.loglikelihood_rolling([_inst("loglikelihood_rolling", "Names refer to objects.")])
    (ref,) = lm.loglikelihood_rolling([_inst("loglikelihood_rolling", "Names refer to objects.")])
    assert text == pytest.approx(ref, abs=2e-3)
    assert heldout_perplexity(ckpt, device="cuda")["loss"] == pytest.approx(heldout_perplexity(ckpt, device="cpu")["loss"], rel=1e-4)
