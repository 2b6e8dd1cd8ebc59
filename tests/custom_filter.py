"""A user's own filters, named in configs by import path (``tests.custom_filter:MaxDigits``)."""

from __future__ import annotations

from pydantic import Field

from selene.ingest.filters import DocView, Filter, FilterConfig, Reason, above


class MaxDigits(Filter):
    """Rejects documents with too many digits (tables of numbers, not prose)."""

    name = "max_digits"

    class Config(FilterConfig):
        max_ratio: float = Field(default=0.2, ge=0.0, le=1.0, description="Digits per character.")

    cfg: Config

    def filter(self, doc: DocView) -> Reason | None:
        ratio = sum(map(str.isdigit, doc.text)) / max(len(doc.text), 1)
        detail = above("digit_ratio", ratio, self.cfg.max_ratio)
        return None if detail is None else self.reject("ratio", detail)


class RejectAll(Filter):
    """No settings of its own; its reasons use the class name."""

    def filter(self, doc: DocView) -> Reason | None:
        return self.reject("all", f"chars={len(doc.text)}")


def not_a_filter(text: str) -> None:
    """A function, not a Filter subclass: naming it in a config is an error."""
