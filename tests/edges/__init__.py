"""Tests of the edges: atomic writes, file modes, the revision's content from git."""
