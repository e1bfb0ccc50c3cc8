"""Tests of stream → evidence: recording, sniffing, spans, and every real capture recorded."""
