"""``coverage-gate run``: the reviewer started and watched (process group, subreaper,
watchdog), its stdout recorded as it flows, and its own telemetry taken in on a loopback OTLP
receiver."""
