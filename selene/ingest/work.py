"""What ingest's steps share: the input files as planned, and where a run's intermediate files live."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from selene.ingest.records import Fields
from selene.io import dataset, fs, steps

CANDIDATE_SCHEMA = pa.schema(
    [
        *dataset.DOC_SCHEMA,
        pa.field("h1", pa.uint64(), nullable=False),
        pa.field("h2", pa.uint64(), nullable=False),
        pa.field("i1", pa.uint64(), nullable=False),  # the id's hash: `ids.check_unique`
        pa.field("i2", pa.uint64(), nullable=False),
    ]
)


@dataclass(frozen=True)
class InputFile:
    idx: int
    path: str
    key: str  # "<source name>/<path relative to the glob root>"; selene's document ids are "<key>#<index>"
    source: str
    override: bool
    bytes: int
    fields: Fields  # the source's text_key, id_key and meta_keys


class Work:
    """Paths of the intermediate files of one run."""

    def __init__(self, out: str, fp: str) -> None:
        self.root = fs.join(out, dataset.WORK, fp)

    @classmethod
    def at(cls, root: str) -> Work:
        """The work directory `root` (what tasks receive: a path, not an object)."""
        w = cls.__new__(cls)
        w.root = root
        return w

    def docs(self, i: int) -> str:
        return self.docs_pattern().format(i)

    def docs_pattern(self) -> str:
        return fs.join(self.root, "files", "{:05d}.docs.parquet")

    def removed(self, i: int) -> str:
        return fs.join(self.root, "files", f"{i:05d}.removed.parquet")

    def lengths(self, i: int) -> str:
        return fs.join(self.root, "files", f"{i:05d}.bytes.npy")

    def file_done(self, i: int) -> str:
        return steps.marker(self.root, "file", i)

    def bucket(self, b: int, of: int) -> str:
        return fs.join(self.root, f"buckets-{of}", f"{b:05d}.npy")

    def id_bucket(self, b: int, of: int) -> str:
        return fs.join(self.root, f"id-buckets-{of}", f"{b:05d}.npy")

    def dups_dir(self) -> str:
        return fs.join(self.root, "dups")

    def dups_pattern(self) -> str:
        return fs.join(self.dups_dir(), "{:05d}.parquet")  # as `exact_dedup.resolve` names them

    def shard_done(self, k: int) -> str:
        return steps.marker(self.root, "shard", k)
