"""The pure rules: the adapter port (``events``), path normalisation, the diff map, depth, the
pairing and folding of calls into evidence, the content checks, citations, drift and
reconciliation. No file system, clock, environment, command line, OpenTelemetry or Unleash
client here (tests/test_architecture.py checks it). A new evidence rule goes here, with its
contract field in ``contracts``."""
