"""Documents on disk: fsspec paths, atomic writes, Parquet shards, removed records, manifests."""
