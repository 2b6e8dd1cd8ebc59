"""Export a checkpoint to Hugging Face transformers format (`LlamaForCausalLM` + a fast tokenizer).

A model trained on data made with a Hugging Face tokenizer.json gets that tokenizer back, with the EOD
as its eos token and without its post-processor: selene's data has no BOS, so one that Llama 3's
tokenizer.json would add is not added to the export's encodings either. A tiktoken encoding becomes
the byte-level BPE tokenizer.json that gives its ids (`selene.tokenize.tiktoken_hf`).

Only the Llama-style architecture (RMSNorm, RoPE, SwiGLU) has an exact transformers counterpart;
the GPT/Megatron presets (LayerNorm, learned positions, GELU) are refused rather than approximated.

Two conversions are not just renames:

- RoPE. selene rotates *interleaved* pairs (2i, 2i+1) of each head (Meta's/torchtitan's complex
  convention, `selene.model.rope.rotate`); transformers rotates *halves* (i, i + head_dim/2)
  (`rotate_half`). Same frequencies per pair, so permuting the rows of wq and wk inside each head
  (pair i's two rows go to rows i and i + head_dim/2) makes q·k identical — Meta's `permute` in
  transformers' `convert_llama_weights_to_hf.py`. v and o are untouched (the dot product is
  invariant to a shared permutation of q and k).
- A sentencepiece tokenizer. selene's sentencepiece models prepend one "▁" to the whole text, keep runs of
  spaces as pieces, and have "\\n" / "\\t" as ordinary pieces. transformers' `LlamaTokenizer` treats
  those two as added tokens and re-prefixes every segment between them, so it encodes differently.
  We write a `tokenizers` pipeline that reproduces sentencepiece exactly: normalizer Prepend("▁") +
  Replace(" ", "▁") once over the text, a pre-tokenizer that cuts where sentencepiece's
  split_by_whitespace does (a run of "▁" + the word after it, a trailing run, "\\n", "\\t"), the BPE
  vocabulary and merges transformers extracts from the .model, and `split_special_tokens` so the
  literal text "</s>" stays text as in sentencepiece. No BOS (selene has none): `add_bos_token=False`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

import torch

from selene.errors import ConfigError, OutputError, SeleneError
from selene.eval.checkpoint_io import check_vocab, eod_id, load_model, tokenizer
from selene.eval.export_target import EXPORT_MARKER, check_output
from selene.manifest import versioned
from selene.model.args import ModelArgs

# sentencepiece's split_by_whitespace words: whitespace run + word, a trailing run, or a line/tab piece.
from selene.model.transformer import Transformer
from selene.tokenize import tiktoken_hf
from selene.tokenize.tiktoken_encodings import parse_ranks
from selene.tokenize.tokenizer import TiktokenTokenizer, Tokenizer
from selene.train.dims import whole

_SPM_WORDS = "▁*[^▁\n\t]+|▁+|[\n\t]"


def check_exportable(args: ModelArgs) -> None:
    flavour = {"norm": args.norm, "positions": args.positions, "mlp": args.mlp}
    if flavour != {"norm": "rmsnorm", "positions": "rope", "mlp": "swiglu"}:
        raise ConfigError(
            f"only the Llama-style architecture (norm=rmsnorm, positions=rope, mlp=swiglu) exports to "
            f"Hugging Face format; this checkpoint has {flavour}"
        )


def rope_permute(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Rows of a q/k projection (weight (dim, in) or bias (dim,)) from interleaved to rotate-half order."""
    head_dim = w.shape[0] // n_heads
    rest = w.shape[1:]
    return w.reshape(n_heads, head_dim // 2, 2, *rest).transpose(1, 2).reshape(w.shape)


def hf_state_dict(model: Transformer, args: ModelArgs) -> dict[str, torch.Tensor]:
    """selene parameter FQNs → `LlamaForCausalLM` names; lm_head left out when tied (transformers re-ties).
    A sharded (FSDP/TP) model's parameters are gathered whole."""
    src = {k: whole(v).detach().float().contiguous() for k, v in model.state_dict().items()}
    out: dict[str, torch.Tensor] = {"model.embed_tokens.weight": src["tok_embeddings.weight"]}
    names = {
        "attention.wq": "self_attn.q_proj", "attention.wk": "self_attn.k_proj",
        "attention.wv": "self_attn.v_proj", "attention.wo": "self_attn.o_proj",
        "feed_forward.w1": "mlp.gate_proj", "feed_forward.w3": "mlp.up_proj", "feed_forward.w2": "mlp.down_proj",
    }
    for i in range(args.n_layers):
        ours, theirs = f"layers.{i}.", f"model.layers.{i}."
        out[theirs + "input_layernorm.weight"] = src[ours + "attention_norm.weight"]
        out[theirs + "post_attention_layernorm.weight"] = src[ours + "ffn_norm.weight"]
        for a, b in names.items():
            for leaf in ("weight", "bias"):
                key = f"{ours}{a}.{leaf}"
                if key not in src:
                    continue
                t = src[key]
                if a == "attention.wq":
                    t = rope_permute(t, args.n_heads)
                elif a == "attention.wk":  # its rows are the key/value heads' (fewer under GQA)
                    t = rope_permute(t, args.kv_heads)
                out[f"{theirs}{b}.{leaf}"] = t.contiguous()
    out["model.norm.weight"] = src["norm.weight"]
    if not args.tie_embeddings:
        out["lm_head.weight"] = src["output.weight"]
    # safetensors refuses tensors that share memory; every exported tensor must own its storage.
    return {k: v.clone() for k, v in out.items()}


def hf_config(args: ModelArgs, eos: int | None = None) -> Any:
    """The `LlamaConfig` of a Llama-style selene model (`check_exportable`)."""
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=args.vocab_size,
        hidden_size=args.dim,
        intermediate_size=args.ffn_dim,
        num_hidden_layers=args.n_layers,
        num_attention_heads=args.n_heads,
        num_key_value_heads=args.kv_heads,
        head_dim=args.head_dim,
        hidden_act="silu",
        max_position_embeddings=args.max_seq_len,
        rms_norm_eps=args.norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": args.rope_theta},
        tie_word_embeddings=args.tie_embeddings,
        attention_bias=args.bias,
        mlp_bias=args.bias,
        initializer_range=args.init_std,
        bos_token_id=None,  # selene has no BOS: documents are separated by EOD only
        eos_token_id=eos,
        pad_token_id=None,
        architectures=["LlamaForCausalLM"],
        dtype="float32",
    )


def hf_tokenizer(model_file: str, eos_piece: str) -> Any:
    """A `PreTrainedTokenizerFast` that encodes and decodes exactly as the sentencepiece model does."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers
    from transformers import LlamaTokenizer, PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copyfile(model_file, os.path.join(tmp, "tokenizer.model"))
        # transformers' sentencepiece extraction gives the BPE vocabulary (ids = sentencepiece ids) and merges.
        base = LlamaTokenizer.from_pretrained(tmp)
    backend = base.backend_tokenizer
    backend.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(_SPM_WORDS), behavior="isolated")
    backend.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(content=" ", left=1)]
    )
    backend.post_processor = None
    spec = json.loads(backend.to_str())
    # Keep only true control symbols as added tokens: user-defined pieces ("\n", "\t") and the BOS
    # transformers invents would be split out before normalisation and change the encoding.
    vocab = spec["model"]["vocab"]
    spec["added_tokens"] = [
        a for a in spec["added_tokens"] if a["content"] in ("<unk>", eos_piece) and vocab.get(a["content"]) == a["id"]
    ]
    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(json.dumps(spec)),
        eos_token=eos_piece,
        unk_token="<unk>",
        add_bos_token=False,
        split_special_tokens=True,
        clean_up_tokenization_spaces=False,
    )


def hf_tokenizer_of(tok: Tokenizer, model_file: str, eos_piece: str) -> Any:
    """The `PreTrainedTokenizerFast` that encodes and decodes as `tok` does (ids with no special token
    added; the EOD piece as eos)."""
    if tok.kind == "sentencepiece":
        return hf_tokenizer(model_file, eos_piece)
    from tokenizers import Tokenizer as RustTokenizer
    from transformers import PreTrainedTokenizerFast

    if isinstance(tok, TiktokenTokenizer):
        # a byte-level BPE with tiktoken's ranks and pattern; its special tokens' text inside a document
        # stays text, as in tiktoken's encode_ordinary (split_special_tokens)
        spec = tiktoken_hf.tokenizer_json(parse_ranks(tok.data, model_file), tok.spec)
        return PreTrainedTokenizerFast(
            tokenizer_object=RustTokenizer.from_str(spec),
            eos_token=eos_piece,
            split_special_tokens=True,
            clean_up_tokenization_spaces=False,
        )

    spec = json.loads(tok.data)
    spec["post_processor"] = None
    return PreTrainedTokenizerFast(
        tokenizer_object=RustTokenizer.from_str(json.dumps(spec)), eos_token=eos_piece, clean_up_tokenization_spaces=False
    )


def usual_modes(folder: str) -> None:
    """The modes every other output of selene gets, by the user's umask (0755 / 0644 under 022):
    `tempfile.mkdtemp` makes the folder 0700 and safetensors may write its file 0600, and an export
    only its owner can read is no use to the other users of a shared machine."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(folder, 0o777 & ~mask)
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o777 & ~mask)
        for name in files:
            os.chmod(os.path.join(root, name), 0o666 & ~mask)


def export_hf(checkpoint: str, out_dir: str, overwrite: bool = False) -> dict[str, Any]:
    """Write `checkpoint` as a transformers model directory `out_dir`; returns a summary.

    Written into a temporary sibling and renamed, so `out_dir` is either absent, the previous export
    (until the rename) or complete.
    """
    from safetensors.torch import save_file
    from transformers import GenerationConfig

    check_output(out_dir, overwrite, checkpoint)
    loaded = load_model(checkpoint)
    args = loaded.args
    check_exportable(args)
    check_output(out_dir, overwrite, loaded.path)
    eos: int | None = None
    tok = None
    if loaded.tokenizer_path is not None:
        tok = tokenizer(loaded.path)
        check_vocab(tok, args, loaded.meta, loaded.path)
        eos = eod_id(tok, loaded.meta)
    config = hf_config(args, eos)
    parent = os.path.dirname(os.path.abspath(out_dir))
    try:
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".export-", dir=parent)
    except OSError as e:
        raise OutputError(f"cannot write under {parent}: {e}") from None
    try:
        config.save_pretrained(tmp)
        save_file(hf_state_dict(loaded.model, args), os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
        GenerationConfig(eos_token_id=eos, bos_token_id=None, max_length=args.max_seq_len).save_pretrained(tmp)
        if tok is not None and loaded.tokenizer_path is not None and eos is not None:
            hf_tokenizer_of(tok, loaded.tokenizer_path, tok.eod_piece).save_pretrained(tmp)
        with open(os.path.join(tmp, EXPORT_MARKER), "w") as f:
            json.dump(versioned({"checkpoint": os.path.abspath(loaded.path), "step": loaded.meta.get("step"),
                                 "model_args": loaded.meta.get("model_args")}), f, indent=1)
        usual_modes(tmp)
        if os.path.exists(out_dir):
            old = tmp + ".old"
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out_dir)
    except SeleneError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    except Exception as e:  # safetensors and tokenizers report a full disk as their own errors
        shutil.rmtree(tmp, ignore_errors=True)
        cause = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OutputError(
            f"{out_dir}: the export could not be written ({type(e).__name__}: {cause}); nothing was "
            "replaced. Free space or fix permissions under it, then rerun"
        ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {
        "out": out_dir,
        "checkpoint": loaded.path,
        "step": loaded.meta.get("step"),
        "parameters": sum(p.numel() for p in loaded.model.parameters()),
        "vocab_size": args.vocab_size,
        "tokenizer": tok is not None,
        "eos_token_id": eos,
        "files": sorted(os.listdir(out_dir)),
    }
