"""Decontamination: n-gram overlap of documents against evaluation tasks."""
