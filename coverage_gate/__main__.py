"""`python -m coverage_gate`."""

from coverage_gate.cli import main

__all__: list[str] = []

main()
