"""Tests of the published contracts and their versions."""
