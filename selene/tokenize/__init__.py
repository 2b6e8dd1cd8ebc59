"""Tokenization: sentencepiece, Megatron-compatible indexed shards, the GPT sample index."""
