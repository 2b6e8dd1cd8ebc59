"""Prefect flows and tasks: thin wrappers over the stages."""
