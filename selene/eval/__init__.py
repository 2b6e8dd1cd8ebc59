"""Evaluation: lm-evaluation-harness adapter, perplexity, Hugging Face export, generation."""
