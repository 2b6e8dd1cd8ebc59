"""Earlier `substrings` outputs a new corpus is deduplicated against (``--against``): checked before
any work, so that a wrong one is refused with nothing written."""

from __future__ import annotations

from dataclasses import dataclass

from selene.errors import ConfigError, PathError
from selene.io import dataset, fs
from selene.substrings.config import SubstringsConfig
from selene.substrings.manifest import SubstringsManifest


@dataclass(frozen=True)
class Prior:
    out: str
    fingerprint: str
    shards: tuple[str, ...]


def load_priors(cfg: SubstringsConfig, inp: str, out: str, tokenizer: str | None) -> list[Prior]:
    """`cfg.against`, each a finished substrings output of the same min_length, unit and tokenizer
    whose shards are whole (sha256 as its manifest records), none of them this run's input or output."""
    priors = []
    for prev in cfg.against:
        where = f"substrings --against {prev}"
        m = dataset.earlier_output(prev, inp, out, "substrings", SubstringsManifest)
        theirs = SubstringsConfig.model_validate(m.config)
        diff = [
            f"{name}={getattr(theirs, name)!r} (this run: {getattr(cfg, name)!r})"
            for name in ("min_length", "unit")
            if getattr(theirs, name) != getattr(cfg, name)
        ]
        if m.inputs.tokenizer != tokenizer:
            diff.append(f"tokenizer {m.inputs.tokenizer} (this run: {tokenizer})")
        if diff:
            raise ConfigError(
                f"{where}: made with other settings: {', '.join(diff)}; give outputs of the same min_length, unit and tokenizer"
            )
        for s in m.shards:
            path = fs.join(prev, s.name)
            if not fs.exists(path) or fs.size(path) != s.bytes or fs.sha256_file(path) != s.sha256:
                raise PathError(
                    f"{where}: {s.name} is missing or changed since that run (sha256 differs from its manifest); run it again"
                )
        priors.append(Prior(prev, m.fingerprint, tuple(fs.join(prev, s.name) for s in m.shards)))
    return priors
