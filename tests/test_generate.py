"""KV-cached generation: same logits as the full forward, greedy/seeded determinism, EOD, window."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from selene.eval.generate import KVCache, forward_cached, generate
from selene.train.model import PRESETS, ModelArgs, Transformer


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
    for lo, hi in [(0, 7), (7, 8), (8, 11), (11, 12), (12, 30)]:
        pieces.append(forward_cached(model, tokens[:, lo:hi], cache))
    assert cache.seen == 30
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-5, rtol=0)


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
