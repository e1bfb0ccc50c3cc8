"""Benchmarks (`pytest -m bench -s`): ratios against a baseline measured in the same run."""
