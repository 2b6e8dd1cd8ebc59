"""The tokenizers selene encodes with, behind one interface: a sentencepiece model, a Hugging Face
``tokenizer.json`` (Llama 3, Mistral, GPT-2, Qwen, ...) or a tiktoken encoding (cl100k_base,
o200k_base, ... or any ``.tiktoken`` BPE file).

A `Tokenizer` encodes a batch into int32 arrays, encodes and decodes one text, and knows its
vocabulary size, its end-of-document token and the bytes of the file that is copied next to the token
data (``tokenizer.model``, ``tokenizer.json`` or ``tokenizer.tiktoken``), from which training,
evaluation and export load it again. No BOS or other special token is ever added: documents are
separated by the EOD id alone, as selene's own tokenizers and datatrove's tokenizer do (Megatron's HF
tokenizer would add Llama 3's BOS).

A tiktoken encoding is a ``.tiktoken`` file (ranks only) whose split pattern and special tokens come
from tiktoken's own definitions for a published encoding, else from ``NAME.tiktoken.json`` beside it
(`selene.tokenize.tiktoken_encodings`), or ``tiktoken:NAME`` read from tiktoken's offline cache; it is
never downloaded. Next to the token data the ranks are copied unchanged as ``tokenizer.tiktoken``, with
the pattern and special tokens in ``tokenizer.tiktoken.json`` and in the tokenize manifest. Its EOD is
``<|endoftext|>`` unless another special token is named.
"""

from __future__ import annotations

import hashlib
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import numpy as np
import sentencepiece

from selene.errors import ConfigError, InputError, PathError
from selene.io import fs
from selene.tokenize import spm
from selene.tokenize import tiktoken_encodings as tk

Kind = Literal["sentencepiece", "huggingface", "tiktoken"]
FILES: dict[str, str] = {
    "sentencepiece": "tokenizer.model",
    "huggingface": "tokenizer.json",
    "tiktoken": "tokenizer.tiktoken",
}
# Files a tokenizer may have beside its own (a tiktoken encoding's pattern and special tokens).
EXTRA_FILES = (tk.sidecar(FILES["tiktoken"]),)
# A tiktoken encoding's end-of-text token (every published one has it).
TIKTOKEN_EOS = "<|endoftext|>"
# The end-of-text tokens of published tokenizer.json files, for one given without its tokenizer_config.json
# (GPT-2 / Qwen, Llama 3, Llama 2 / Mistral, Gemma); the first the vocabulary has is the EOD.
_KNOWN_EOS = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>")


class Tokenizer(ABC):
    """A loaded tokenizer with its end-of-document token (`eod_id`, `eod_piece`)."""

    kind: ClassVar[Kind]

    def __init__(self, data: bytes, eod_piece: str, eod_id: int, vocab_size: int) -> None:
        self.data = data
        self.eod_piece = eod_piece
        self.eod_id = eod_id
        self.vocab_size = vocab_size

    @property
    def file_name(self) -> str:
        """The name of its file next to the token data and the checkpoints."""
        return FILES[self.kind]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def identity(self) -> str:
        """What fixes its ids (a fingerprint's part): its file's sha256, unless more than the file does."""
        return self.sha256

    def files(self) -> dict[str, bytes]:
        """The files written next to the token data: its own, and any that loading it again needs."""
        return {self.file_name: self.data}

    @abstractmethod
    def encode_batch(self, texts: list[str], threads: int) -> list[np.ndarray]:
        """Token ids of each text as int32 arrays (no special tokens), `threads` threads at most."""

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Token ids of one text (no special tokens)."""

    @abstractmethod
    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids`, special tokens included as their text."""


class SentencePieceTokenizer(Tokenizer):
    kind: ClassVar[Kind] = "sentencepiece"

    def __init__(self, data: bytes, sp: sentencepiece.SentencePieceProcessor, eod_piece: str) -> None:
        super().__init__(data, eod_piece, spm.eod_piece_id(sp, eod_piece), int(sp.vocab_size()))
        self.sp = sp

    @classmethod
    def from_bytes(cls, data: bytes, eod_piece: str) -> SentencePieceTokenizer:
        """A serialized model selene just trained (valid by construction)."""
        sp = sentencepiece.SentencePieceProcessor()
        sp.load_from_serialized_proto(data)
        return cls(data, sp, eod_piece)

    def encode_batch(self, texts: list[str], threads: int) -> list[np.ndarray]:
        return spm.encode(self.sp, texts, threads)

    def encode(self, text: str) -> list[int]:
        return list(self.sp.encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.sp.decode(list(ids)))


class HFTokenizer(Tokenizer):
    kind: ClassVar[Kind] = "huggingface"

    def __init__(self, data: bytes, tok: Any, eod_piece: str) -> None:
        # ids of added tokens may lie past the model's vocabulary: the size is what an embedding needs
        size = max(tok.get_vocab(with_added_tokens=True).values()) + 1
        eod = tok.token_to_id(eod_piece) if eod_piece else None  # none: one to count tokens with (blend)
        super().__init__(data, eod_piece, -1 if eod is None else int(eod), size)
        self.tok = tok

    def encode_batch(self, texts: list[str], threads: int) -> list[np.ndarray]:
        # tokenizers reads this at each call: one thread keeps a worker process on its own core; more
        # use its rayon pool (RAYON_NUM_THREADS sizes it)
        os.environ["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
        # the fast variant skips character offsets, which EOD-separated ids never need
        encs = self.tok.encode_batch_fast(texts, add_special_tokens=False)
        return [np.array(e.ids, dtype=np.int32) for e in encs]

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tok.decode(list(ids), skip_special_tokens=False))


class TiktokenTokenizer(Tokenizer):
    kind: ClassVar[Kind] = "tiktoken"

    def __init__(self, data: bytes, spec: tk.Spec, enc: Any, eod_piece: str) -> None:
        # n_vocab is the largest id + 1, special tokens included: what an embedding needs
        super().__init__(data, eod_piece, spec.special_tokens.get(eod_piece, -1), int(enc.n_vocab))
        self.spec = spec
        self.enc = enc
        self._one = tk.encode_ordinary_numpy(enc)

    @property
    def identity(self) -> str:
        # the ranks alone do not fix the ids: the split pattern and the special tokens' ids do too
        return hashlib.sha256(f"{self.sha256} {self.spec.digest()}".encode()).hexdigest()

    def files(self) -> dict[str, bytes]:
        spec = json.dumps(self.spec.to_json(), indent=1, ensure_ascii=False).encode()
        return {self.file_name: self.data, tk.sidecar(self.file_name): spec + b"\n"}

    def encode_batch(self, texts: list[str], threads: int) -> list[np.ndarray]:
        # tiktoken's encode_ordinary_batch runs encode_ordinary on a thread pool (the Rust BPE releases
        # the GIL); the same is done with its numpy variant, which skips the list of Python ints.
        # Each text is encoded alone, so any thread count gives the same ids.
        if threads <= 1 or len(texts) <= 1:
            out = [self._one(t) for t in texts]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(threads, len(texts))) as pool:
                out = list(pool.map(self._one, texts))
        # uint32 → int32: ids are below n_vocab, which the dtype check keeps within int32
        return [a.view(np.int32) for a in out]

    def encode(self, text: str) -> list[int]:
        return list(self.enc.encode_ordinary(text))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.enc.decode(list(ids)))


def kind_of(path: str) -> Kind:
    """What `path` holds, by its name: a tiktoken encoding (``*.tiktoken`` or ``tiktoken:NAME``), a
    Hugging Face tokenizer (``*.json`` or a directory holding ``tokenizer.json``), else a
    sentencepiece model."""
    if path.endswith(tk.SUFFIX) or path.startswith(tk.PREFIX):
        return "tiktoken"
    if path.endswith(".json") or fs.exists(fs.join(path, FILES["huggingface"])):
        return "huggingface"
    return "sentencepiece"


def load(
    path: str,
    eod_token: str | None = None,
    sp_eod_piece: str = "</s>",
    *,
    spec: tk.Spec | None = None,
    require_eod: bool = True,
) -> Tokenizer:
    """The tokenizer at `path` (a ``.model``, a ``tokenizer.json`` or a directory holding one, a
    ``.tiktoken`` file or ``tiktoken:NAME``), its end-of-document token `eod_token`, else its own EOS
    (a sentencepiece model: `sp_eod_piece`). `spec`: a tiktoken encoding's pattern and special tokens
    as a tokenize manifest records them (default: `tiktoken_encodings.spec_of_file`).
    `require_eod=False`: one to count tokens with (blend), whose EOD may be missing (`eod_id` -1).

    Loading is the check of a tokenizer the user names (tokenize.tokenizer, blend.tokenizer), made
    before any work: a path that does not exist, a folder without a tokenizer.json or a file that
    does not load is a `PathError` naming it (exit 2); a missing EOD token a `ConfigError` naming the
    file and the token. `load_file` reads the copies selene wrote, where damage is an `InputError`."""
    try:
        return _load(path, eod_token, sp_eod_piece, spec=spec, require_eod=require_eod)
    except InputError as e:
        raise PathError(f"{e}; {ACCEPTED}") from None


ACCEPTED = (
    "a tokenizer is a sentencepiece .model file, a Hugging Face tokenizer.json or the folder that holds "
    "one, a .tiktoken file, or tiktoken:NAME"
)


def check_path(path: str) -> None:
    """The tokenizer path the user gave names something of a kind a tokenizer can be: the error says
    what it is instead (`PathError`)."""
    if path.startswith(tk.PREFIX):
        return
    if not fs.exists(path):
        raise PathError(f"tokenizer {path!r} does not exist; {ACCEPTED}")
    fsys, p = fs.get_fs(path)
    if fsys.isdir(p) and kind_of(path) != "huggingface":
        raise PathError(f"tokenizer {path!r} is a folder without a {FILES['huggingface']}; {ACCEPTED}")


def _load(
    path: str, eod_token: str | None, sp_eod_piece: str, *, spec: tk.Spec | None, require_eod: bool
) -> Tokenizer:
    if path.startswith(tk.PREFIX):
        data, spec = tk.from_cache(path[len(tk.PREFIX) :])
        return _load_tiktoken(path, data, spec, eod_token, require_eod)
    check_path(path)
    kind = kind_of(path)
    if kind == "tiktoken":
        data = fs.read_bytes(path)
        return _load_tiktoken(path, data, spec or tk.spec_of_file(path, data), eod_token, require_eod)
    if kind == "huggingface":
        return _load_hf(path, eod_token, require_eod)
    if not require_eod:
        sp = spm.load_processor(path)
        return SentencePieceTokenizer(fs.read_bytes(path), sp, eod_token or sp_eod_piece)
    sp = spm.load(path, eod_token or sp_eod_piece)
    return SentencePieceTokenizer(fs.read_bytes(path), sp, eod_token or sp_eod_piece)


def _load_tiktoken(
    path: str, data: bytes, spec: tk.Spec, eod_token: str | None, require_eod: bool = True
) -> TiktokenTokenizer:
    eod = eod_token or TIKTOKEN_EOS
    if eod not in spec.special_tokens and require_eod:
        have = ", ".join(spec.special_tokens) or "none"
        how = "" if eod_token else "; name one of them with tokenize.eod_token (--eod-token)"
        raise ConfigError(
            f"{path}: the encoding has no special token {eod!r} to end documents with "
            f"(tokenize.eod_token; its special tokens: {have}){how}"
        )
    enc = tk.build(spec.name, tk.parse_ranks(data, path), spec, path)
    return TiktokenTokenizer(data, spec, enc, eod)


def _load_hf(path: str, eod_token: str | None, require_eod: bool = True) -> HFTokenizer:
    from tokenizers import Tokenizer as RustTokenizer

    folder = None if path.endswith(".json") else path
    file = fs.join(path, FILES["huggingface"]) if folder else path
    data = fs.read_bytes(file)
    try:
        tok = RustTokenizer.from_str(data.decode("utf-8"))
    except Exception as e:  # tokenizers raises a bare Exception for JSON it cannot read
        raise InputError(f"{file}: not a Hugging Face tokenizer.json ({str(e).splitlines()[0][:200]})") from None
    vocab = tok.get_vocab(with_added_tokens=True)
    if eod_token is not None:
        if eod_token not in vocab:
            raise ConfigError(
                f"{file}: the tokenizer has no token {eod_token!r} to end documents with (tokenize.eod_token)"
            )
        return HFTokenizer(data, tok, eod_token)
    named = _configured_eos(folder) if folder else None
    if named is not None:
        if named not in vocab:
            raise ConfigError(f"{file}: the eos_token {named!r} of {folder}'s tokenizer_config.json is not in its vocabulary")
        return HFTokenizer(data, tok, named)
    for piece in _KNOWN_EOS:
        if piece in vocab:
            return HFTokenizer(data, tok, piece)
    if not require_eod:
        return HFTokenizer(data, tok, "")
    raise ConfigError(
        f"{file}: no end-of-document token found (no tokenizer_config.json with an eos_token beside it, none "
        f"of {', '.join(_KNOWN_EOS)}); name one with tokenize.eod_token (--eod-token)"
    )


def _configured_eos(folder: str) -> str | None:
    """The eos_token of a Hugging Face tokenizer directory: tokenizer_config.json's, else
    special_tokens_map.json's (a string, or an AddedToken's dict)."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        file = fs.join(folder, name)
        if not fs.exists(file):
            continue
        try:
            eos = json.loads(fs.read_text(file)).get("eos_token")
        except (ValueError, AttributeError) as e:
            raise InputError(f"{file}: not a JSON object ({e})") from None
        if isinstance(eos, dict):
            eos = eos.get("content")
        if isinstance(eos, str) and eos:
            return eos
    return None


def load_file(path: str, eod_piece: str | None, spec: tk.Spec | None = None) -> Tokenizer:
    """A tokenizer copied next to token data or checkpoints (``tokenizer.model`` / ``tokenizer.json``
    / ``tokenizer.tiktoken``), with the EOD piece its tokenize manifest records (None: the tokenizer's
    own EOS) and, for a tiktoken encoding, the pattern and special tokens it records (None: the
    ``tokenizer.tiktoken.json`` beside it, else the published encoding the file is)."""
    if not fs.exists(path):
        raise InputError(f"{path}: not found (the tokenizer selene wrote there is gone)")
    if kind_of(path) == "tiktoken":
        return _load(path, eod_piece, "</s>", spec=spec, require_eod=True)
    if kind_of(path) == "sentencepiece" and eod_piece is None:
        sp = spm.load_processor(path)
        if sp.eos_id() < 0:
            raise InputError(f"{path}: the tokenizer has no end-of-document (eos) piece")
        eod_piece = str(sp.id_to_piece(sp.eos_id()))
    return _load(path, eod_piece, eod_piece or "</s>", spec=None, require_eod=True)
