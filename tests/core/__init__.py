"""Tests of the pure rules: paths, the diff map, depth, reconciliation, citations, and the decisions they make."""
