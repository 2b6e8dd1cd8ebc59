"""Exact substring deduplication with suffix arrays (Lee et al. 2022): `selene substrings`."""
