"""Tests of the rollout: flags (a stub server; the real one in integration/), metrics, receipts, replay, the report."""
