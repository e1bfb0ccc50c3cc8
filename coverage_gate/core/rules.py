"""The four rules the evidence holds to (DESIGN §6 rules 27-30), as ``coverage-gate formats NAME``
prints them and ``docs/concepts/trust-model.md`` states them (a test keeps the two the same).
Pure data.

Each rule is about what a record proves and who could have written it, not about the commands
seen so far: each holds whatever the spelling of the command that made the text.
"""

from __future__ import annotations

from typing import Final

__all__ = ["EVIDENCE_RULES"]

#: (the rule, in a few words; what it does, in one sentence)
EVIDENCE_RULES: Final = (
    (
        "Evidence comes only from records the reviewer could not write.",
        "A Codex rollout counts only as the thread's one regular file, naming the thread, telling "
        "the exec stream's story call by call, out of reach of the run's commands; the telemetry "
        "intake alone verifies nothing.",
    ),
    (
        "A presentation belongs to one tool of one client version.",
        "Numbers, notices, reminders and cut markers come off only that tool's output, a cut "
        "marker only at its own cut length; other text in a recognised presentation is a "
        "mismatch.",
    ),
    (
        "Shown text counts for a changed line only when it tells that line apart.",
        "A cut line proves only what it kept and alone verifies no file (shallow under every "
        "depth policy), a change of white space or a CR only counts where "
        "the text holds the line as it is, text that matches the file before its change as well "
        "as the revision credits nothing, and a line made of a few pieces of the model's own "
        "text (its call arguments and its messages) is not evidence.",
    ),
    (
        "Identical content and short files are honest.",
        "A command that prints the files it names from their first line (cat, head, sed -n p, "
        "nl) and whose whole output is exactly them credits each, whatever its length and "
        "whichever file shares its bytes; codex exec alone is unknown for every file its "
        "commands name.",
    ),
)
