"""tiktoken encodings from local files only: a ``.tiktoken`` BPE file, or ``tiktoken:NAME`` from
tiktoken's offline cache. Nothing is ever downloaded.

A ``.tiktoken`` file holds only the mergeable ranks (one ``<base64 token> <rank>`` a line); the split
pattern and the special tokens live in code. For OpenAI's published encodings (cl100k_base,
o200k_base, r50k_base/gpt2, p50k_base ...) they are taken from tiktoken's own definitions
(``tiktoken_ext.openai_public``); any other encoding brings them in a JSON file beside it,
``NAME.tiktoken.json``: ``{"pat_str": "...", "special_tokens": {"<|endoftext|>": 100257}}``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from selene.errors import ConfigError, InputError
from selene.io import fs

PREFIX = "tiktoken:"
SUFFIX = ".tiktoken"
# gpt2 is defined from GPT-2's vocab.bpe/encoder.json, whose ranks, pattern and special tokens are
# r50k_base's (tiktoken builds both the same): its .tiktoken file is r50k_base.tiktoken.
_SAME_RANKS = {"gpt2": "r50k_base"}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Spec:
    """What a ``.tiktoken`` file does not hold: the encoding's name, split pattern and special tokens."""

    name: str
    pat_str: str
    special_tokens: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "pat_str": self.pat_str, "special_tokens": self.special_tokens}

    @classmethod
    def from_json(cls, data: Any, where: str) -> Spec:
        """A spec from parsed JSON (a sidecar file or a manifest); `InputError` naming `where` and the field."""
        if not isinstance(data, dict):
            raise InputError(f"{where}: expected a JSON object with pat_str and special_tokens")
        pat, special, name = data.get("pat_str"), data.get("special_tokens", {}), data.get("name")
        if not isinstance(pat, str) or not pat:
            raise InputError(f"{where}: 'pat_str' must be the encoding's split pattern (a regex string)")
        if not isinstance(special, dict) or not all(
            isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in special.items()
        ):
            raise InputError(f"{where}: 'special_tokens' must map token text to a non-negative id")
        if name is not None and not isinstance(name, str):
            raise InputError(f"{where}: 'name' must be a string")
        return cls(name or "", pat, dict(special))

    def digest(self) -> str:
        """sha256 of the spec: with the ranks' sha256 it fixes every id (the fingerprint's part)."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Published:
    """One of tiktoken's own encodings: its spec and the files (url, sha256) it is built from."""

    spec: Spec
    files: tuple[tuple[str, str | None], ...]

    @property
    def tiktoken_sha256(self) -> str | None:
        """sha256 of its ``.tiktoken`` file (None: built from other files, as gpt2)."""
        return next((h for url, h in self.files if url.endswith(SUFFIX)), None)


@contextmanager
def _recording(files: list[tuple[str, str | None]]) -> Iterator[None]:
    """tiktoken's loaders replaced by ones that record what they were asked for and load nothing, and
    its file reader by one that refuses: the definitions run without a byte of network."""
    import tiktoken.load
    from tiktoken_ext import openai_public

    def bpe(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        files.append((url, expected_hash))
        return {}

    def gym(vocab_bpe_file: str, encoder_json_file: str, vocab_bpe_hash: str | None = None,
            encoder_json_hash: str | None = None, **_: Any) -> dict[bytes, int]:  # fmt: skip
        files.extend([(vocab_bpe_file, vocab_bpe_hash), (encoder_json_file, encoder_json_hash)])
        return {}

    def refuse(blobpath: str) -> bytes:
        raise RuntimeError(f"selene never downloads ({blobpath})")

    saved = (
        openai_public.load_tiktoken_bpe,
        openai_public.data_gym_to_mergeable_bpe_ranks,
        tiktoken.load.read_file,
    )
    openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = bpe, gym
    tiktoken.load.read_file = refuse
    try:
        yield
    finally:
        (
            openai_public.load_tiktoken_bpe,
            openai_public.data_gym_to_mergeable_bpe_ranks,
            tiktoken.load.read_file,
        ) = saved


@functools.cache
def published() -> dict[str, Published]:
    """tiktoken's published encodings by name, their pattern and special tokens from tiktoken itself.

    The definitions in ``tiktoken_ext.openai_public`` are functions that load the ranks (a download
    on first use) and return them with the pattern and special tokens; they are run here with the
    loaders swapped for recorders (`_recording`), so only the constants come out. A definition that
    does not run that way (a future tiktoken) is left out rather than guessed."""
    from tiktoken_ext import openai_public

    out: dict[str, Published] = {}
    with _LOCK:
        for name, make in openai_public.ENCODING_CONSTRUCTORS.items():
            files: list[tuple[str, str | None]] = []
            try:
                with _recording(files):
                    d = make()
                spec = Spec(str(d["name"]), str(d["pat_str"]), dict(d["special_tokens"]))
            except Exception:  # see the docstring: skipped, never downloaded
                continue
            out[name] = Published(spec, tuple(files))
    return out


def _published_names() -> str:
    return ", ".join(published())


def parse_ranks(data: bytes, where: str) -> dict[bytes, int]:
    """The mergeable ranks of a ``.tiktoken`` file's bytes; `InputError` naming `where` and the line.

    Parsed here rather than with ``tiktoken.load.load_tiktoken_bpe``: that one reads local paths
    through tiktoken's download cache and writes a copy of the file into it."""
    ranks: dict[bytes, int] = {}
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except (ValueError, binascii.Error):
            shown = line[:80].decode("utf-8", "replace")
            raise InputError(
                f"{where}: line {n} ({shown!r}) is not '<base64 token> <rank>'; not a tiktoken BPE file or damaged"
            ) from None
    if not ranks:
        raise InputError(f"{where}: no ranks in it; not a tiktoken BPE file")
    if len(set(ranks.values())) != len(ranks):
        raise InputError(f"{where}: two tokens share a rank; the file is damaged")
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        # tiktoken starts every text from single bytes: without them it would panic on the first such byte
        raise InputError(
            f"{where}: {len(missing)} of the 256 single-byte tokens are missing (first: {missing[0]:#04x}); "
            "a byte-level BPE needs them all"
        )
    return ranks


def dump_ranks(ranks: dict[bytes, int]) -> bytes:
    """Ranks in tiktoken's file format (what ``tiktoken.load.dump_tiktoken_bpe`` writes)."""
    return b"".join(
        base64.b64encode(t) + b" " + str(r).encode() + b"\n"
        for t, r in sorted(ranks.items(), key=lambda x: x[1])
    )


def sidecar(path: str) -> str:
    """The JSON beside a ``.tiktoken`` file that gives its pattern and special tokens."""
    return path + ".json"


def spec_of_file(path: str, data: bytes) -> Spec:
    """The spec of the ``.tiktoken`` file `path` (bytes `data`): its sidecar JSON, else tiktoken's own
    definition of the published encoding its name or its content (sha256) says it is."""
    side = sidecar(path)
    if fs.exists(side):
        try:
            parsed = json.loads(fs.read_text(side))
        except ValueError as e:
            raise InputError(f"{side}: not JSON ({e})") from None
        return Spec.from_json(parsed, side)
    digest = hashlib.sha256(data).hexdigest()
    stem = os.path.basename(path)[: -len(SUFFIX)] if path.endswith(SUFFIX) else ""
    known = published()
    if stem in known:
        want = known[_SAME_RANKS.get(stem, stem)].tiktoken_sha256
        if want is not None and digest != want:
            raise InputError(
                f"{path}: named like tiktoken's {stem} but its sha256 is {digest[:16]}..., not the published "
                f"{want[:16]}...: a damaged copy, or another encoding (then rename it and give its pattern and "
                f"special tokens in {os.path.basename(side)})"
            )
        return known[stem].spec
    for p in known.values():
        if p.tiktoken_sha256 == digest:
            return p.spec
    raise ConfigError(
        f"{path}: not one of tiktoken's published encodings ({_published_names()}) by name or content, so "
        f"its split pattern and special tokens are unknown; put them in {side} as "
        '{"pat_str": "...", "special_tokens": {"<|endoftext|>": ID}}'
    )


def cache_dir() -> str:
    """tiktoken's download cache, as ``tiktoken.load.read_file_cached`` picks it ("" = caching off)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _cached_file(url: str, sha256: str | None) -> bytes | None:
    """The cached bytes of `url` when tiktoken's cache holds them unchanged (keyed by sha1 of the url)."""
    where = cache_dir()
    path = os.path.join(where, hashlib.sha1(url.encode()).hexdigest())
    if not where or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        data = f.read()
    return data if sha256 is None or hashlib.sha256(data).hexdigest() == sha256 else None


def from_cache(name: str) -> tuple[bytes, Spec]:
    """(``.tiktoken`` bytes, spec) of ``tiktoken:NAME`` from tiktoken's cache; a `ConfigError` saying
    where to put the file when it is not there (selene never downloads)."""
    known = published()
    if name not in known:
        raise ConfigError(f"{PREFIX}{name}: not a tiktoken encoding; known: {_published_names()}")
    file_of = known[_SAME_RANKS.get(name, name)]
    url, sha = next(((u, h) for u, h in file_of.files if u.endswith(SUFFIX)), (None, None))
    data = _cached_file(url, sha) if url else None
    if data is None:
        where = cache_dir() or "(caching is off: TIKTOKEN_CACHE_DIR is empty)"
        key = hashlib.sha1(url.encode()).hexdigest() if url else "?"
        raise ConfigError(
            f"{PREFIX}{name}: the encoding is not in tiktoken's cache {where}, and selene never downloads. "
            f"Pass the file instead (--tokenizer /path/to/{_SAME_RANKS.get(name, name)}{SUFFIX}, from {url}), "
            f"or put it in the cache as {os.path.join(cache_dir() or '$TIKTOKEN_CACHE_DIR', key)}"
        )
    return data, known[name].spec


def build(name: str, ranks: dict[bytes, int], spec: Spec, where: str) -> Any:
    """A ``tiktoken.Encoding``; a pattern the regex engine refuses is an `InputError` naming `where`."""
    import tiktoken

    clash = [t for t, i in spec.special_tokens.items() if i in set(ranks.values())]
    if clash:
        raise InputError(f"{where}: special token {clash[0]!r} has the id of a mergeable token")
    try:
        return tiktoken.Encoding(
            name or "custom", pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=spec.special_tokens
        )
    except ValueError as e:
        raise InputError(
            f"{where}: tiktoken cannot use this encoding ({str(e).splitlines()[0][:200]})"
        ) from None


def encode_ordinary_numpy(enc: Any) -> Callable[[str], Any]:
    """One text → its ids as a numpy uint32 array, no special token recognised (= ``encode_ordinary``).

    ``encode_to_numpy`` with no special token allowed or disallowed runs the same BPE as
    ``encode_ordinary`` but hands over tiktoken's buffer instead of a list of Python ints (4 bytes a
    token, not ~36, and no conversion). A lone surrogate, which UTF-8 cannot hold, is replaced as
    ``encode_ordinary`` replaces it."""

    def one(text: str) -> Any:
        try:
            return enc.encode_to_numpy(text, allowed_special=set(), disallowed_special=())
        except UnicodeEncodeError:
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return enc.encode_to_numpy(text, allowed_special=set(), disallowed_special=())

    return one
