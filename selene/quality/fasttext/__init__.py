"""fastText supervised classifiers: trained and scored by fastText itself, in fastText's own files.

DCLM, NeMo Curator, Dolma and datatrove use fastText's supervised model as their document-quality
classifier: the mean of the input rows of a document's words and word n-grams, then a softmax over
the labels. selene trains it with fastText's own trainer (`fasttext.train_supervised` of
fasttext-numpy2-wheel, one thread and a seed, so the bytes repeat) and scores with fastText's own
`predict`, so a model trained here is used exactly like one from `fasttext supervised`, and theirs
(`.bin` or quantized `.ftz`) load here. The language-id model (`selene.ingest.langid`) is read by the
same module.

What stays selene's own: the header check (`read_info`: a wrong or damaged file is named before
fastText's loader sees it) and the features of a line (`tokens`, `fasttext_hash`, `line_ids`,
fastText 0.9.2's `Dictionary` written out), with which `top_ngrams` names the n-gram buckets that
fastText's file knows only by number; the tests check them against fastText's own predictions.

The modules: `text` (the features), `trainer` (`Settings`, `train`, `TrainedModel`), `binary` (the
header: `read_info`) and `classifier` (`Classifier`, `top_ngrams`). The trainer's module is not
named `train`, which would shadow the function here.
"""

from selene.quality.fasttext.binary import FILE_MAGIC, FILE_VERSION, ModelInfo, read_info
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
from selene.quality.fasttext.trainer import (
    RecordedSettings,
    Settings,
    TrainedModel,
    fit,
    train,
    training_file,
)

__all__ = [
    "EOS",
    "FILE_MAGIC",
    "FILE_VERSION",
    "LABEL_PREFIX",
    "PROBABILITY_OFFSET",
    "Classifier",
    "ModelInfo",
    "RecordedSettings",
    "Settings",
    "TrainedModel",
    "fasttext_hash",
    "fit",
    "full_label",
    "line_ids",
    "normalize",
    "read_info",
    "short_label",
    "tokens",
    "top_ngrams",
    "train",
    "training_file",
]
