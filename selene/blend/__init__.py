"""Blending: per-source weights and epochs to a seeded document sampling plan."""
