"""The agents' own OpenTelemetry: what one log record or span says of one tool call, and the
merging of every record of a call into one call.

A client may describe one call several times: Claude Code writes a ``claude_code.tool_result``
log, a ``claude_code.tool`` span and its ``claude_code.tool.execution`` child for each call, all
under the same ``tool_use_id``; an exporter that retries sends the same record again. Each record
is a ``Part`` of its call (the tool, what it asked for, how it ended, as far as that record says);
``Calls`` folds the parts of a call id into one start and one end, so that a call is counted
once, never once per record. Parts that contradict each other (two tools, two different paths or
ranges, a success and a failure) are passed on as two starts or two ends: the core labels the
call id ambiguous and the call gives no evidence (DESIGN §6 rule 3).

The parts of a call can arrive in any order and in different requests (logs and traces are
exported separately), so calls are passed on when the stream ends. At most ``MAX_CALLS`` call
ids are held; the parts of any further call are passed on as they come (two records of such a
call that differ then make it ambiguous, never two calls).

Everything here is pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from coverage_gate.core.calls import MAX_CALLS
from coverage_gate.core.events import (
    UNKNOWN_SHOWN,
    Action,
    Event,
    IgnoredAction,
    ReadAction,
    ToolEnd,
    ToolStart,
    WriteAction,
)

from ._json import key

__all__ = ["TOOL_ERROR", "Calls", "Part", "path_only"]

TOOL_ERROR: Final = "tool_error"


@dataclass(frozen=True, slots=True)
class Part:
    """What one record says of a call. ``action`` ``None``: nothing of its arguments;
    ``exact``: the action is the call's own request (path and range), not a path alone (a span
    attribute); ``succeeded`` ``None``: nothing of how it ended."""

    call_id: str
    line: int
    tool: str | None = None
    action: Action | None = None
    exact: bool = False
    succeeded: bool | None = None
    error_type: str | None = None
    said: str | None = None  # the call's arguments as the model wrote them


@dataclass(slots=True)
class _Call:
    line: int
    tools: list[str] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    exact: bool = False
    ends: list[tuple[bool, str | None, int]] = field(default_factory=list)
    said: str | None = None

    def add(self, part: Part) -> None:
        if part.tool is not None and part.tool not in self.tools:
            self.tools.append(part.tool)
        if self.said is None:
            self.said = part.said
        if part.action is not None:
            self._add_action(part.action, exact=part.exact)
        if part.succeeded is not None and all(known[0] != part.succeeded for known in self.ends):
            # Records of one failure name its error differently (a log's error class, a span's
            # error.type): the first one is kept; only success against failure contradicts.
            error = None if part.succeeded else part.error_type or TOOL_ERROR
            self.ends.append((part.succeeded, error, part.line))

    def _add_action(self, action: Action, *, exact: bool) -> None:
        if not self.actions:
            self.actions.append(action)
            self.exact = exact
            return
        known = self.actions[0]
        if action == known:
            return
        if isinstance(known, WriteAction | IgnoredAction) and isinstance(
            action, WriteAction | IgnoredAction
        ):
            # neither is evidence: a write beats a record that cannot tell one (a shell span
            # without its command), the record naming the file (or the call's own request) is
            # kept, and neither makes the call ambiguous
            if _better_write(action, exact, known, self.exact):
                self.actions[0], self.exact = action, exact
            return
        if self.exact != exact and _same_path(known, action):
            if exact:  # the call's own request beats a path alone
                self.actions[0], self.exact = action, True
            return
        if action not in self.actions:
            self.actions.append(action)

    def events(self, call_id: str) -> list[Event]:
        events: list[Event] = []
        if self.tools:
            action = self.actions[0] if self.actions else IgnoredAction()
            events.append(
                ToolStart(
                    call_id=call_id,
                    tool=self.tools[0],
                    action=action,
                    line=self.line,
                    said=self.said,
                )
            )
            events.extend(
                ToolStart(call_id=call_id, tool=tool, action=action, line=self.line)
                for tool in self.tools[1:]
            )
            events.extend(
                ToolStart(call_id=call_id, tool=self.tools[0], action=other, line=self.line)
                for other in self.actions[1:]
            )
        for succeeded, error, line in self.ends[:2]:
            events.append(
                ToolEnd(
                    call_id=call_id, tool=None, succeeded=succeeded, line=line, error_type=error
                )
            )
        return events


def _better_write(action: Action, exact: bool, known: Action, known_exact: bool) -> bool:
    """Whether ``action`` says more of a call's write than ``known`` does."""
    if not isinstance(action, WriteAction):
        return False
    if not isinstance(known, WriteAction):
        return True
    return (action.path is not None and known.path is None) or (exact and not known_exact)


def _same_path(first: Action, second: Action) -> bool:
    return (
        isinstance(first, ReadAction)
        and isinstance(second, ReadAction)
        and first.path == second.path
        and first.cwd == second.cwd
    )


class Calls:
    """The parts of every call, merged per call id (see the module notes)."""

    def __init__(self, max_calls: int = MAX_CALLS) -> None:
        self._calls: dict[str, _Call] = {}
        self._max = max_calls

    def add(self, part: Part) -> list[Event]:
        """Hold the part with the rest of its call; past the bound, its events at once."""
        held = self._calls.get(key(part.call_id))
        if held is None:
            if len(self._calls) >= self._max:
                one = _Call(part.line)
                one.add(part)
                return one.events(part.call_id)
            held = self._calls[key(part.call_id)] = _Call(part.line)
        held.add(part)
        return []

    def finish(self) -> list[Event]:
        """Every held call as one start and one end, in the order their first record came."""
        out: list[Event] = []
        for call_id, call in self._calls.items():
            out.extend(call.events(call_id))
        self._calls.clear()
        return out


def path_only(path: str) -> ReadAction:
    """A read known by its path alone (a span attribute): which lines it showed is unknown."""
    return ReadAction(path=path, shown=UNKNOWN_SHOWN)
