"""``run --telemetry-intake``: the reviewer's own telemetry, recorded as evidence during the run.

A ``TelemetryCapture`` starts the loopback receiver (``coverage_gate.capture.otlp_receiver``), tells
``run`` how to point the reviewer at it (``coverage_gate.capture.intake_clients``), records what
arrives with the ``otlp-json`` adapter, and, once the reviewer has ended, decides whether the
telemetry is whole:

OTLP marks no final flush, so a file or a receiver alone cannot tell the last batch from a
missing one. The run can: the telemetry is complete when the reviewer exited by itself with exit
code 0 (its exporter flushes before the process ends), at least one export arrived, none was
refused, and the receiver drained. A reviewer that was killed, timed out, crashed or exited with
an error may have lost its last batch: its telemetry is incomplete, so the absence of a read in
it proves nothing (DESIGN §6 rule 9).

Its presence proves nothing either: the receiver is a loopback port the reviewer's environment
names, so any command the reviewer runs can send it a span of a read that never happened. The
telemetry's evidence carries ``cannot_verify`` (``telemetry_intake``): a claim it alone would
verify is unknown, said; beside a stream it is compared call by call (DESIGN §6 rule 27).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opentelemetry.sdk.trace import TracerProvider

from coverage_gate.adapters import otlp_json
from coverage_gate.capture.intake_clients import IntakeClient, command, environment
from coverage_gate.capture.live import Ending, RunOutcome
from coverage_gate.capture.otlp_receiver import IntakeSummary, TelemetryIntake
from coverage_gate.contracts.enums import UnknownReason
from coverage_gate.contracts.model import CannotVerify, EvidenceDocument
from coverage_gate.core import agreement
from coverage_gate.core.calls import CallRecord
from coverage_gate.record.recording import Recorder, RecordSettings
from coverage_gate.telemetry.ports import SpanSink

__all__ = [
    "TelemetryCapture",
    "TelemetryResult",
    "disagreements",
    "sender_exited_normally",
    "why_incomplete",
]


# The receiver listens where the reviewer's own commands can reach it (its environment names it),
# so what arrives is a record the reviewer could write (DESIGN §6 rule 27): it corroborates a
# stream, and alone it verifies no claim.
INTAKE_CANNOT_VERIFY = CannotVerify(
    reason=UnknownReason.TELEMETRY_INTAKE,
    detail=(
        "telemetry received on run's loopback receiver, which the reviewer's own commands can "
        "reach and send spans to: it corroborates the stream, and alone verifies nothing"
    ),
)


@dataclass(frozen=True)
class TelemetryResult:
    evidence: EvidenceDocument
    summary: IntakeSummary
    complete: bool
    records: list[CallRecord]


def sender_exited_normally(outcome: RunOutcome) -> bool:
    return outcome.ending is Ending.EXITED and outcome.returncode == 0


class TelemetryCapture:
    """The receiver and the recorder of one run's telemetry. ``start``, run the reviewer with
    ``environment``/``command``, then ``finish`` with how it ended."""

    def __init__(
        self,
        client: IntakeClient,
        settings: RecordSettings,
        tracer_provider: TracerProvider | None = None,
        *,
        spans: SpanSink | None = None,
    ) -> None:
        self.client = client
        self.recorder = Recorder(otlp_json.ADAPTER, settings, tracer_provider, spans=spans)
        self.intake = TelemetryIntake(self._feed)

    def _feed(self, line: bytes) -> None:
        # the receiver hands requests on one at a time: the recorder sees whole lines only
        self.recorder.feed(line + b"\n")

    def start(self) -> TelemetryCapture:
        self.intake.start()
        return self

    @property
    def endpoint(self) -> str:
        return self.intake.endpoint

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        return environment(self.client, self.endpoint, base)

    def command(self, argv: Sequence[str]) -> list[str] | None:
        return command(self.client, argv, self.endpoint)

    def finish(self, outcome: RunOutcome, drain_seconds: float) -> TelemetryResult:
        """Close the receiver (draining it) and build the evidence of what arrived."""
        summary = self.intake.close(drain_seconds)
        complete = summary.whole(sender_exited_normally(outcome))
        evidence = self.recorder.finish(interrupted=not complete, known_complete=complete)
        evidence = evidence.model_copy(update={"cannot_verify": INTAKE_CANNOT_VERIFY})
        return TelemetryResult(evidence, summary, complete, self.recorder.records)

    def close(self) -> None:
        """Close the receiver, if ``finish`` never ran (an error on our side)."""
        self.intake.close(0)


def why_incomplete(result: TelemetryResult, outcome: RunOutcome) -> str | None:
    """A sentence for people when the telemetry is not whole."""
    if result.complete:
        return None
    summary = result.summary
    if not sender_exited_normally(outcome):
        return (
            "the reviewer did not exit normally (code 0), so its last export may be missing: "
            "the telemetry is incomplete"
        )
    if summary.accepted == 0:
        return "no telemetry arrived: is the reviewer's exporter pointed at the receiver?"
    if summary.refused:
        reasons = "; ".join(summary.reasons)
        return f"{summary.refused} export request(s) could not be read ({reasons})"
    return f"{summary.undrained} export request(s) were still being read when the receiver closed"


def disagreements(
    stream: Sequence[CallRecord], stream_doc: EvidenceDocument, telemetry: TelemetryResult
) -> list[str] | None:
    """Where the stdout stream and the telemetry disagree; ``None`` when they cannot be compared
    call by call (one of them cannot show per-file reads)."""
    if not agreement.comparable(stream_doc.capability, telemetry.evidence.capability):
        return None
    return agreement.report(agreement.compare(stream, telemetry.records))
