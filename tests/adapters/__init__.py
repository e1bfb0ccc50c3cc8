"""Tests of each stream format's adapter, on real captures (and the drift each one reports)."""
