"""selene: raw corpora to a pretrained, evaluated language model, as one reproducible pipeline."""

__version__ = "0.1.0"
