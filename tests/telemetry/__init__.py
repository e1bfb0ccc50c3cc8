"""Tests of where signals go and how they are exported."""
