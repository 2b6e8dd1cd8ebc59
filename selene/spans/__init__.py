"""Span dedup: sentences, paragraphs or lines repeated across the corpus cut from every copy but the first."""
