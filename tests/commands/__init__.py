"""Tests through the command line: exit codes, usage, help, hostile input."""
