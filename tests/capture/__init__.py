"""Tests of `run`: live capture, the watchdog and subreaper, telemetry intake."""
