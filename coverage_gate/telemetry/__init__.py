"""Where signals go and how they are exported: the environment's OTLP settings, the local
telemetry folder, the SDK providers (loaded only when asked for), and OTLP encoding and
decoding without the SDK; the ports record and rollout write their signals to (``ports``), and
evidence as span attributes and back (``evidence_attributes``)."""
