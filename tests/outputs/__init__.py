"""Tests of the views of a decision and of the report."""
