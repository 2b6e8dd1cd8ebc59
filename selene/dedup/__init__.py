"""Fuzzy MinHash deduplication (datasketch): signatures, LSH bands, clusters, removal."""
