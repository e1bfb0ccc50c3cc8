"""Hypothesis properties and seeded fuzzing: what must always hold."""
