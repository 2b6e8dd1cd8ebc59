"""KV-cached generation: same logits as the full forward, greedy/seeded determinism, EOD, window."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from selene.eval.generate import generate
from selene.model.args import PRESETS, ModelArgs
from selene.model.cache import KVCache
from selene.model.transformer import Transformer


def tiny(**changes: object) -> Transformer:
    args = dataclasses.replace(PRESETS["debug"], vocab_size=97, max_seq_len=32, **changes)  # type: ignore[arg-type]
    model = Transformer(args)
    model.init_weights(seed=3)
    with torch.no_grad():  # unit norms and tiny weights make near-uniform logits: sharpen them
        for p in model.parameters():
            if p.ndim == 2:
                p.mul_(4.0)
    return model.eval()


FLAVOURS = {
    "llama": {},
    "gpt": {"norm": "layernorm", "positions": "learned", "mlp": "gelu", "bias": True},
    "tied": {"tie_embeddings": True},
}


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_cached_logits_equal_the_full_forward(flavour: str) -> None:
    model = tiny(**FLAVOURS[flavour])
    tokens = torch.randint(0, 97, (2, 30), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = model(tokens)
    # A prefill of 7 tokens, then chunks of 1, 3 and the rest, exercising the mask with an offset.
    cache = KVCache()
    pieces = []
    with torch.no_grad():
        for lo, hi in [(0, 7), (7, 8), (8, 11), (11, 12), (12, 30)]:
            pieces.append(model(tokens[:, lo:hi], cache=cache))
    assert cache.seen == 30
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-5, rtol=0)


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_a_prefill_through_a_cache_is_the_plain_forward_bit_for_bit(flavour: str) -> None:
    """The one forward pass: with an empty cache, one prompt's or left-padded rows' (none padded
    here), it runs the very ops of the cacheless forward (causal SDPA, the same rotations): equal."""
    model = tiny(**FLAVOURS[flavour])
    tokens = torch.randint(0, 97, (2, 30), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = model(tokens)
        assert torch.equal(model(tokens, cache=KVCache()), full)
        assert torch.equal(model(tokens, cache=KVCache(pads=torch.zeros(2, dtype=torch.long))), full)


def reference_greedy(model: Transformer, args: ModelArgs, prompt: list[int], n: int) -> list[int]:
    """Greedy decoding by a full forward over the last max_seq_len tokens each step."""
    ctx, out = list(prompt), []
    for _ in range(n):
        with torch.no_grad():
            logits = model(torch.tensor([ctx[-args.max_seq_len :]]))
        out.append(int(logits[0, -1].argmax()))
        ctx.append(out[-1])
    return out


@pytest.mark.parametrize("flavour", ["llama", "gpt"])
def test_greedy_with_cache_equals_greedy_by_full_forward(flavour: str) -> None:
    model = tiny(**FLAVOURS[flavour])
    prompt = [5, 17, 42, 8]
    got = generate(model, model.args, prompt, 20, temperature=0, stop_ids=())
    assert got == reference_greedy(model, model.args, prompt, 20)


@pytest.mark.parametrize("flavour", ["llama", "gpt"])
def test_context_is_left_truncated_to_max_seq_len(flavour: str) -> None:
    model = tiny(**FLAVOURS[flavour])  # max_seq_len 32
    prompt = list(torch.randint(2, 97, (40,), generator=torch.Generator().manual_seed(1)).tolist())
    got = generate(model, model.args, prompt, 12, temperature=0, stop_ids=())
    assert got == reference_greedy(model, model.args, prompt, 12)
    short = [3, 4, 5]  # crosses the limit during generation
    got = generate(model, model.args, short, 40, temperature=0, stop_ids=())
    assert got == reference_greedy(model, model.args, short, 40)


def test_seed_makes_sampling_deterministic() -> None:
    model = tiny()
    a = generate(model, model.args, [5, 6], 24, temperature=1.0, seed=7, stop_ids=())
    b = generate(model, model.args, [5, 6], 24, temperature=1.0, seed=7, stop_ids=())
    c = generate(model, model.args, [5, 6], 24, temperature=1.0, seed=8, stop_ids=())
    assert a == b and len(a) == 24
    assert a != c
    nucleus = generate(model, model.args, [5, 6], 24, temperature=1.0, top_p=1e-6, seed=9, stop_ids=())
    assert nucleus == generate(model, model.args, [5, 6], 24, temperature=0, stop_ids=())  # top-1 = greedy


def test_stops_at_the_stop_token_and_does_not_return_it() -> None:
    model = tiny()
    greedy = generate(model, model.args, [5, 6], 10, temperature=0, stop_ids=())
    stop = greedy[3]
    first = greedy.index(stop)
    assert generate(model, model.args, [5, 6], 10, temperature=0, stop_ids=(stop,)) == greedy[:first]


def test_empty_prompt_starts_a_document_and_bad_ids_are_refused() -> None:
    from selene.errors import InputError

    model = tiny()
    assert generate(model, model.args, [], 5, temperature=0, stop_ids=()) == generate(
        model, model.args, [1], 5, temperature=0, stop_ids=()
    )
    with pytest.raises(InputError, match="outside the model's vocabulary"):
        generate(model, model.args, [500], 3)


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.tiny_checkpoint import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("gen_ckpt"))


def test_generates_text_from_a_trained_checkpoint(ckpt: str) -> None:
    from selene.eval.checkpoint_io import eod_id, load_model, tokenizer

    loaded = load_model(ckpt)
    sp = tokenizer(ckpt)
    eod = eod_id(sp, loaded.meta)
    prompt = sp.encode("The for statement")
    ids = generate(loaded.model, loaded.args, prompt, 30, temperature=0.8, top_p=0.9, seed=0, stop_ids=(eod,))
    assert 0 < len(ids) <= 30 and eod not in ids
    assert isinstance(sp.decode(ids), str)
    again = generate(loaded.model, loaded.args, prompt, 30, temperature=0.8, top_p=0.9, seed=0, stop_ids=(eod,))
    assert again == ids


# --- batched generation -------------------------------------------------------------------------

BATCH_PROMPTS = [[5, 17, 42, 8], [3], list(range(2, 22)), [], [9, 9, 9, 9, 9, 9, 9]]
EQUAL_PROMPTS = [[5, 17, 42, 8, 1, 2], [3, 4, 5, 6, 7, 8], [9, 9, 9, 9, 9, 9]]


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_batched_greedy_equals_one_by_one(flavour: str) -> None:
    from selene.eval.generate import generate_batch

    model = tiny(**FLAVOURS[flavour])  # max_seq_len 32: 30 new tokens slide the window of the longest
    # prompts of several lengths (left padding, masked attention), and of one length (no padding: the
    # plain causal kernels)
    for prompts in (BATCH_PROMPTS, EQUAL_PROMPTS):
        for n in (6, 30):
            got = generate_batch(model, model.args, prompts, n, temperature=0, stop_ids=())
            assert got.tokens == [generate(model, model.args, p, n, temperature=0, stop_ids=()) for p in prompts]
            assert got.generated == n * len(prompts)


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_graph_decoder_steps_equal_the_eager_path(flavour: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixed-shape decode step that CUDA replays as a graph, run eagerly here: the same tokens as
    the eager batch (and so as each prompt alone); rows that stop stay in its batch, unseen."""
    from selene.eval import decode_graph
    from selene.eval import generate as gen_module
    from selene.eval.generate import generate_batch

    model = tiny(**FLAVOURS[flavour])  # max_seq_len 32
    eager = {(i, n): generate_batch(model, model.args, p, n, temperature=0, stop_ids=()).tokens
             for i, p in enumerate((BATCH_PROMPTS, EQUAL_PROMPTS)) for n in (6, 12)}  # fmt: skip
    monkeypatch.setattr(gen_module, "graphs_enabled", lambda device: True)
    for (i, n), want in eager.items():
        prompts = (BATCH_PROMPTS, EQUAL_PROMPTS)[i]
        got = generate_batch(model, model.args, prompts, n, temperature=0, stop_ids=())
        assert got.graph and got.tokens == want
    # one decoder per (batch, capacity bucket): the second batch of a shape builds nothing
    again = generate_batch(model, model.args, EQUAL_PROMPTS, 12, temperature=0, stop_ids=())
    assert again.graph and again.setup_s == 0.0
    assert len(decode_graph._DECODERS[model]) <= decode_graph.KEEP
    # past the window (20 + 30 > 32 positions) the eager path slides it
    long = generate_batch(model, model.args, BATCH_PROMPTS, 30, temperature=0, stop_ids=())
    assert not long.graph
    assert long.tokens == [generate(model, model.args, p, 30, temperature=0, stop_ids=()) for p in BATCH_PROMPTS]
    # a row that stops early: the others go on unchanged
    free = [generate(model, model.args, p, 10, temperature=0, stop_ids=()) for p in EQUAL_PROMPTS]
    stop = free[1][3]
    want = [generate(model, model.args, p, 10, temperature=0, stop_ids=(stop,)) for p in EQUAL_PROMPTS]
    got = generate_batch(model, model.args, EQUAL_PROMPTS, 10, temperature=0, stop_ids=(stop,))
    assert got.graph and got.tokens == want and len(want[1]) < 10
    sampled = [generate_batch(model, model.args, BATCH_PROMPTS, 8, temperature=1.0, seed=3, stop_ids=()).tokens
               for _ in range(2)]  # fmt: skip
    assert sampled[0] == sampled[1]


@torch.no_grad()
def test_graph_decoder_logits_equal_the_padded_forward() -> None:
    from selene.eval.decode_graph import GraphDecoder

    model = tiny()
    rows = [[5, 6, 7, 8, 9], [11, 12]]
    tokens, pads = torch.tensor([rows[0], [0, 0, 0, *rows[1]]]), torch.tensor([0, 3])
    cache = KVCache(pads=pads)
    model(tokens, cache=cache)
    dec = GraphDecoder(model, batch=2, capacity=16, capture=False)
    dec.load(cache.keys, cache.values, 5, pads)
    for new in ([20, 30], [21, 31], [22, 32]):
        step = torch.tensor(new)[:, None]
        want = model(step, cache=cache, last_only=True)[:, -1]
        torch.testing.assert_close(dec.step(step), want, atol=1e-5, rtol=0)


def test_padded_prefill_logits_equal_each_prompt_alone() -> None:
    model = tiny()
    rows = [[5, 6, 7, 8, 9], [11, 12]]
    padded = torch.tensor([rows[0], [0, 0, 0, *rows[1]]])
    with torch.no_grad():
        logits = model(padded, cache=KVCache(pads=torch.tensor([0, 3])))
        for b, row in enumerate(rows):
            alone = model(torch.tensor([row]))[0]
            torch.testing.assert_close(logits[b, len(rows[0]) - len(row) :], alone, atol=1e-5, rtol=0)


def test_a_row_that_stops_early_leaves_the_others_unchanged() -> None:
    from selene.eval.generate import generate_batch

    model = tiny()
    free = [generate(model, model.args, p, 12, temperature=0, stop_ids=()) for p in BATCH_PROMPTS]
    stop = free[0][2]  # row 0 stops at its third token
    want = [generate(model, model.args, p, 12, temperature=0, stop_ids=(stop,)) for p in BATCH_PROMPTS]
    assert want[0] == free[0][: free[0].index(stop)] and len(want[0]) < 12
    got = generate_batch(model, model.args, BATCH_PROMPTS, 12, temperature=0, stop_ids=(stop,))
    assert got.tokens == want
    assert stop not in [t for row in got.tokens for t in row]


def test_sampled_batches_are_deterministic_for_a_seed() -> None:
    from selene.eval.generate import generate_batch

    model = tiny()
    a = generate_batch(model, model.args, BATCH_PROMPTS, 10, temperature=1.0, seed=4, stop_ids=()).tokens
    b = generate_batch(model, model.args, BATCH_PROMPTS, 10, temperature=1.0, seed=4, stop_ids=()).tokens
    assert a == b and all(len(row) == 10 for row in a)


def test_timing_summary_fields() -> None:
    from selene.eval.generate import generate_batch, percentile, timing_summary

    model = tiny()
    runs = [generate_batch(model, model.args, BATCH_PROMPTS[:2], 5, temperature=0, stop_ids=()) for _ in range(2)]
    assert all(len(r.itl_s) == 4 and r.ttft_s > 0 for r in runs)
    summary = timing_summary(runs)
    assert set(summary) == {
        "batches", "cuda_graphs", "graph_setup_s", "prompts", "generated_tokens", "total_s", "tokens_per_s",
        "ttft_ms_p50", "ttft_ms_p99", "itl_ms_p50", "itl_ms_p99",
    }  # fmt: skip
    assert summary["batches"] == 2 and summary["prompts"] == 4 and summary["generated_tokens"] == 20
    assert summary["cuda_graphs"] is False and summary["graph_setup_s"] == 0  # the CPU: eager steps
    timed = set(summary) - {"cuda_graphs", "graph_setup_s"}
    assert all(summary[k] is not None and summary[k] > 0 for k in timed)  # type: ignore[operator]
    one = generate_batch(model, model.args, [[5]], 1, temperature=0, stop_ids=())
    assert timing_summary([one])["itl_ms_p50"] is None  # one token: no decode step
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0 and percentile([1.0, 3.0], 99) == pytest.approx(2.98)


def test_batched_generation_refuses_bad_input() -> None:
    from selene.errors import InputError
    from selene.eval.generate import generate_batch

    model = tiny()
    with pytest.raises(InputError, match="no prompts"):
        generate_batch(model, model.args, [], 3)
    with pytest.raises(InputError, match="outside the model's vocabulary"):
        generate_batch(model, model.args, [[5], [500]], 3)


def test_generate_cli_batches_a_prompts_file(ckpt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from selene.cli import main
    from selene.eval.checkpoint_io import eod_id, load_model, tokenizer

    texts = ["The for statement", "Names refer to", "The import statement is used"]
    plain = tmp_path / "prompts.txt"
    plain.write_text("\n".join(texts) + "\n\n")
    jsonl = tmp_path / "prompts.jsonl"
    jsonl.write_text("".join(json.dumps({"prompt": t, "id": i}) + "\n" for i, t in enumerate(texts)))
    common = ["generate", "--checkpoint", ckpt, "--max-tokens", "8", "--temperature", "0"]
    assert main([*common, "--prompts", str(jsonl), "--batch", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["prompt"] for r in report["outputs"]] == texts
    assert report["timing"]["batches"] == 2 and report["timing"]["prompts"] == 3
    assert {"ttft_ms_p50", "ttft_ms_p99", "itl_ms_p50", "itl_ms_p99", "tokens_per_s"} <= set(report["timing"])
    loaded = load_model(ckpt)
    sp = tokenizer(ckpt)
    eod = eod_id(sp, loaded.meta)
    for row, text in zip(report["outputs"], texts, strict=True):  # the same text as one by one
        ids = generate(loaded.model, loaded.args, sp.encode(text), 8, temperature=0, stop_ids=(eod,))
        assert row["output"] == sp.decode(ids) and row["tokens"] == len(ids)
    assert main([*common, "--prompts", str(plain), "--batch", "3"]) == 0
    out = capsys.readouterr().out
    assert "TTFT p50" in out and "ITL p50" in out and "tokens/s" in out and "3 prompts in 1 batches" in out
    assert all(f"{t}{r['output']}" in out for t, r in zip(texts, report["outputs"], strict=True))


def test_generate_cli_refuses_bad_input(ckpt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from selene.cli import main

    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n")
    base = ["generate", "--checkpoint", ckpt]
    assert main([*base, "--prompts", str(empty)]) == 2
    assert f"--prompts {empty}: the file has no prompts" in capsys.readouterr().err
    assert main([*base, "--prompts", str(tmp_path / "missing.txt")]) == 2
    assert "missing.txt: cannot read it" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "a"}\n{"text": "b"}\n')
    assert main([*base, "--prompts", str(bad)]) == 2
    assert 'line 2 has no "prompt"' in capsys.readouterr().err
    for batch in ("0", "-2"):
        assert main([*base, "--prompts", str(bad), "--batch", batch]) == 2
        assert "--batch must be >= 1" in capsys.readouterr().err
    assert main([*base]) == 2
    assert "--prompt TEXT or --prompts FILE" in capsys.readouterr().err
    assert main([*base, "--prompt", "x", "--batch", "4"]) == 2
    assert "go with --prompts" in capsys.readouterr().err


def test_batch_benchmark_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import runpy
    import sys

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "bench.json"
    argv = ["generate_batch.py", "--preset", "debug", "--batches", "1,2", "--prompts", "8", "--new", "3",
            "--repeats", "1", "--threads", "1", "--json", str(out)]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    threads = torch.get_num_threads()
    try:
        runpy.run_path(str(root / "benchmarks" / "generate_batch.py"), run_name="__main__")
    finally:
        torch.set_num_threads(threads)
    rows = json.loads(out.read_text())["rows"]
    assert [(r["prompt"], r["batch"]) for r in rows] == [(8, 1), (8, 2)] and rows[0]["vs_batch1"] == 1.0


# --- devices and dtypes ---------------------------------------------------------------------------


@pytest.mark.parametrize("top_p", [1.0, 0.9, 0.3])
def test_draw_is_torch_multinomial(top_p: float) -> None:
    """`draw` (no host read) picks what `torch.multinomial` picks from the same generator state, so
    seeded sampling gives the same tokens it always gave."""
    from selene.eval.generate import draw, sample

    logits = torch.randn(5, 97, generator=torch.Generator().manual_seed(1)) * 3
    for row in logits:
        for seed in range(20):
            probs = torch.softmax(row / 0.8, dim=-1)
            if top_p < 1.0:
                sorted_p, order = probs.sort(descending=True)
                sorted_p = sorted_p * ((sorted_p.cumsum(0) - sorted_p) < top_p)
                probs = torch.zeros_like(probs).scatter_(0, order, sorted_p)
            want = int(torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(seed)))
            assert int(draw(row, 0.8, top_p, torch.Generator().manual_seed(seed))) == want
            assert sample(row, 0.8, top_p, torch.Generator().manual_seed(seed)) == want
    assert int(draw(logits[0], 0.0, 1.0, None)) == int(logits[0].argmax())


def test_bf16_cast_keeps_tied_weights_and_float32_rope() -> None:
    from selene.eval.checkpoint_io import cast
    from selene.eval.generate import generate_batch

    model = cast(tiny(tie_embeddings=True), torch.bfloat16)
    assert model.output is not None and model.tok_embeddings is not None
    assert model.output.weight is model.tok_embeddings.weight
    assert all(p.dtype == torch.bfloat16 for p in model.parameters())
    assert model.rope is not None and model.rope.dtype == torch.float32
    got = generate_batch(model, model.args, BATCH_PROMPTS, 8, temperature=0, stop_ids=())
    assert all(len(row) == 8 and all(0 <= t < 97 for t in row) for row in got.tokens)


def test_generate_cli_device_and_dtype(ckpt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from selene.cli import main

    prompts = tmp_path / "prompts.txt"
    prompts.write_text("The for statement\nNames refer to\n")
    base = ["generate", "--checkpoint", ckpt, "--prompts", str(prompts), "--max-tokens", "4", "--temperature", "0"]
    assert main([*base, "--json", "--device", "cpu"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["device"], report["dtype"]) == ("cpu", "float32")  # the CPU default: fp32
    assert main([*base, "--json", "--device", "cpu", "--dtype", "bf16"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["device"], report["dtype"]) == ("cpu", "bfloat16")
    assert all(r["tokens"] <= 4 for r in report["outputs"])
    assert main([*base, "--device", "tpu"]) == 2
    assert "--device 'tpu'" in capsys.readouterr().err
    assert main([*base, "--dtype", "fp16"]) == 2
    assert "--dtype 'fp16'" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main([*base, "--device", "cuda"]) == 2
        assert "CUDA is not available" in capsys.readouterr().err


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@cuda
@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_cuda_batched_greedy_equals_one_by_one_and_the_cpu(flavour: str) -> None:
    from selene.eval.generate import generate_batch

    cpu = tiny(**FLAVOURS[flavour])
    gpu = tiny(**FLAVOURS[flavour]).cuda()
    for prompts in (BATCH_PROMPTS, EQUAL_PROMPTS):
        got = generate_batch(gpu, gpu.args, prompts, 30, temperature=0, stop_ids=())
        assert got.tokens == [generate(gpu, gpu.args, p, 30, temperature=0, stop_ids=()) for p in prompts]
        assert got.tokens == generate_batch(cpu, cpu.args, prompts, 30, temperature=0, stop_ids=()).tokens
        assert got.ttft_s > 0 and all(s > 0 for s in got.itl_s)
        sampled = [generate_batch(gpu, gpu.args, prompts, 12, temperature=1.0, seed=5, stop_ids=()).tokens
                   for _ in range(2)]  # fmt: skip
        assert sampled[0] == sampled[1]


@cuda
def test_cuda_draw_is_torch_multinomial_and_bf16_generates() -> None:
    from selene.eval.checkpoint_io import cast
    from selene.eval.generate import draw, generate_batch

    logits = torch.randn(4, 97, device="cuda", generator=torch.Generator("cuda").manual_seed(1)) * 3
    for row in logits:
        for seed in range(10):
            probs = torch.softmax(row / 0.8, dim=-1)
            want = int(torch.multinomial(probs, 1, generator=torch.Generator("cuda").manual_seed(seed)))
            assert int(draw(row, 0.8, 1.0, torch.Generator("cuda").manual_seed(seed))) == want
    model = cast(tiny(tie_embeddings=True).cuda(), torch.bfloat16)
    assert model.output is not None and model.tok_embeddings is not None
    assert model.output.weight is model.tok_embeddings.weight and model.rope is not None
    assert model.rope.dtype == torch.float32
    got = generate_batch(model, model.args, BATCH_PROMPTS, 30, temperature=0, stop_ids=())
    assert all(len(row) == 30 for row in got.tokens)


@cuda
@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_cuda_graph_decode_equals_eager_decode(flavour: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decode steps replayed as a captured CUDA graph give the eager path's tokens in fp32, greedy and
    sampled with a seed, batch after batch on one captured graph; in bf16 (other attention kernels
    round differently) its logits are the eager step's within bf16's precision."""
    from selene.eval.checkpoint_io import cast
    from selene.eval.decode_graph import GraphDecoder
    from selene.eval.generate import generate_batch

    model = tiny(**FLAVOURS[flavour]).cuda()
    runs = {}
    for mode in ("off", "on"):
        monkeypatch.setenv("SELENE_CUDA_GRAPHS", mode)
        runs[mode] = [generate_batch(model, model.args, prompts, 10, temperature=t, seed=2, stop_ids=())
                      for prompts in (BATCH_PROMPTS, EQUAL_PROMPTS, BATCH_PROMPTS) for t in (0.0, 1.0)]  # fmt: skip
    assert all(r.graph for r in runs["on"]) and not any(r.graph for r in runs["off"])
    assert [r.tokens for r in runs["on"]] == [r.tokens for r in runs["off"]], flavour
    assert runs["on"][4].setup_s == 0.0  # the first batch's shape: its graph again

    half = cast(tiny(**FLAVOURS[flavour]).cuda(), torch.bfloat16)
    tokens = torch.tensor([[5, 6, 7, 8, 9], [0, 0, 0, 11, 12]], device="cuda")
    pads = torch.tensor([0, 3], device="cuda")
    cache = KVCache(pads=pads)
    with torch.no_grad():
        half(tokens, cache=cache)
    dec = GraphDecoder(half, batch=2, capacity=32, capture=True)
    dec.load(cache.keys, cache.values, 5, pads)
    for new in ([20, 30], [21, 31], [22, 32]):
        step = torch.tensor(new, device="cuda")[:, None]
        with torch.no_grad():
            want = half(step, cache=cache, last_only=True)[:, -1].float()
        torch.testing.assert_close(dec.step(step).float(), want, atol=0.1, rtol=0.02)


@cuda
def test_cuda_decode_steps_read_the_device_once() -> None:
    """A decode step syncs with the device once (its sampled ids), greedy or sampled: TTFT and ITL
    are measured at that read, and no other read stalls the launches."""
    import warnings

    from selene.eval.generate import generate_batch

    model = tiny().cuda()
    prompts = EQUAL_PROMPTS  # no row stops early: no row selection (which copies an index from the host)
    for temperature in (0.0, 1.0):
        generate_batch(model, model.args, prompts, 4, temperature=temperature, seed=0, stop_ids=())  # warm up
        counts = []
        for n in (10, 20):
            torch.cuda.set_sync_debug_mode("warn")
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    generate_batch(model, model.args, prompts, n, temperature=temperature, seed=0, stop_ids=())
            finally:
                torch.cuda.set_sync_debug_mode("default")
            counts.append(sum("synchroniz" in str(w.message) for w in caught))
        assert counts[1] - counts[0] == 10, (temperature, counts)  # ten more steps: ten more syncs


def test_every_caller_runs_the_models_own_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training, evaluation, generation (one prompt and batched) and the graph decoder's step all go
    through `TransformerBlock.forward`: a change to the block is seen by every one of them."""
    from selene.eval import generate as gen_module
    from selene.eval.generate import generate_batch
    from selene.model.layers import TransformerBlock

    model = tiny()
    calls: list[bool] = []
    block_forward = TransformerBlock.forward

    def seen(self: TransformerBlock, *args: object, **kwargs: object) -> torch.Tensor:
        calls.append(kwargs.get("cache") is not None)
        return block_forward(self, *args, **kwargs)

    monkeypatch.setattr(TransformerBlock, "forward", seen)
    layers = model.args.n_layers
    tokens = torch.tensor([[5, 6, 7, 8]])
    model(tokens, tokens)  # training: the loss
    with torch.no_grad():
        model(tokens)  # evaluation: logits
    assert calls == [False] * 2 * layers
    calls.clear()
    generate(model, model.args, [5, 6], 3, temperature=0, stop_ids=())  # a prefill and two steps
    assert calls == [True] * 3 * layers
    calls.clear()
    generate_batch(model, model.args, EQUAL_PROMPTS, 3, temperature=0, stop_ids=())
    assert calls == [True] * 3 * layers
    calls.clear()
    monkeypatch.setattr(gen_module, "graphs_enabled", lambda device: True)
    got = generate_batch(model, model.args, EQUAL_PROMPTS, 3, temperature=0, stop_ids=())
    assert got.graph and calls == [True] * 3 * layers  # the prefill, then the decoder's two steps
