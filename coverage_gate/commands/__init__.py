"""One module per command; `coverage_gate.cli` mounts them."""
