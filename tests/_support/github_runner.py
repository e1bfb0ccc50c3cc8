"""A small stand-in for GitHub's runner, enough to run a composite action's steps here.

It reads ``action.yml``, fills each input from the ones given or from its default, evaluates the
``${{ ... }}`` expressions the action uses (context lookups and ``||``; anything else fails the
test, so the action cannot rely on what is not simulated), and runs each ``run`` step with bash as
the runner does (``bash --noprofile --norc -eo pipefail FILE``) in the workspace, with the
``GITHUB_*`` variables, a fresh ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` file per step, and
one ``GITHUB_ENV`` and ``GITHUB_PATH`` file whose entries later steps get. It
parses step outputs and workflow commands from stdout the way the runner reads them back.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_LOOKUP = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*")
_COMMAND = re.compile(r"^::(?P<command>[a-z-]+)(?: (?P<properties>[^:]*))?::(?P<message>.*)$")


def unescape_data(text: str) -> str:
    """A workflow command's message as the runner decodes it."""
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    """A workflow command's property value as the runner decodes it."""
    return (
        text.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


@dataclass(frozen=True)
class Command:
    command: str
    properties: dict[str, str]
    message: str


def parse_command(line: str) -> Command | None:
    """A ``::command k=v,k=v::message`` line as the runner splits it: properties at each ``,``
    and the first ``=``, then unescaped; ``None`` for any other line."""
    found = _COMMAND.match(line)
    if found is None:
        return None
    properties: dict[str, str] = {}
    for pair in (found["properties"] or "").split(","):
        if pair:
            key, _, value = pair.partition("=")
            properties[key] = unescape_property(value)
    return Command(found["command"], properties, unescape_data(found["message"]))


def commands_of(stdout: str) -> list[Command]:
    """The workflow commands a step's output gives the runner: each line, leading spaces
    trimmed, that parses as one, except between ``::stop-commands::TOKEN`` and ``::TOKEN::``."""
    found: list[Command] = []
    resume: str | None = None
    for raw in stdout.splitlines():
        line = raw.lstrip()
        if resume is not None:
            if line == resume:
                resume = None
            continue
        command = parse_command(line)
        if command is None:
            continue
        if command.command == "stop-commands":
            resume = f"::{command.message}::"
            continue
        found.append(command)
    return found


def run_script(
    script: Path, env: dict[str, str], *, cwd: Path | None = None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """A ``run`` step's script as the runner runs it: ``bash --noprofile --norc -eo pipefail``,
    with exactly ``env`` (its output captured, a failure returned, not raised)."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def parse_file_commands(text: str) -> dict[str, str]:
    """A ``GITHUB_OUTPUT`` (or ``GITHUB_ENV``) file as the runner reads it: ``NAME=VALUE`` lines,
    and ``NAME<<DELIMITER`` … ``DELIMITER`` blocks whose value is the lines between."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            values[line[:equals]] = line[equals + 1 :]
            continue
        if heredoc < 0:
            raise ValueError(f"invalid line in a file command: {line!r}")
        name, delimiter = line[:heredoc], line[heredoc + 2 :]
        body: list[str] = []
        while True:
            if index >= len(lines):
                raise ValueError(f"{name}: delimiter {delimiter!r} not found")
            if lines[index] == delimiter:
                index += 1
                break
            body.append(lines[index])
            index += 1
        values[name] = "\n".join(body)
    return values


@dataclass
class StepRun:
    step_id: str
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str


@dataclass
class ActionRun:
    """What one run of the action left: per step, and what GitHub would show."""

    steps: list[StepRun] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    #: What the steps added to the job's environment (GITHUB_ENV) and PATH (GITHUB_PATH): later
    #: steps of the action, and of the caller's job, see them.
    env: dict[str, str] = field(default_factory=dict)
    path: list[str] = field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        return all(step.returncode == 0 for step in self.steps)

    @property
    def commands(self) -> list[Command]:
        """The runner reads workflow commands from both streams, each as it arrives; which of
        two pipes it reads first is a race, so stderr is read here after all of stdout."""
        return [
            command
            for step in self.steps
            for stream in (step.stdout, step.stderr)
            for command in commands_of(stream)
        ]

    @property
    def annotations(self) -> list[Command]:
        return [c for c in self.commands if c.command in {"error", "warning", "notice"}]

    @property
    def summary(self) -> str:
        return "".join(step.summary for step in self.steps)

    @property
    def log(self) -> str:
        return "\n".join(f"{step.step_id}:\n{step.stdout}{step.stderr}" for step in self.steps)


class _Yaml12Loader(yaml.SafeLoader):
    """YAML as GitHub reads workflow and action files (YAML 1.2 booleans): ``on``, ``off``,
    ``yes`` and ``no`` stay strings, where PyYAML's YAML 1.1 would make ``on:`` a ``True`` key."""


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def load_yaml(text: str) -> dict[str, Any]:
    document = yaml.load(text, Loader=_Yaml12Loader)  # noqa: S506 - a safe loader, YAML 1.2 booleans
    assert isinstance(document, dict)
    return document


def load_action() -> dict[str, Any]:
    return load_yaml(ACTION.read_text())


#: The contexts each place of action.yml may use, as the runner's schema of action files
#: (src/Runner.Worker/action_yaml.json in actions/runner) allows them: an input's default is
#: evaluated before any step runs, so it cannot read inputs, steps or env.
INPUT_DEFAULT = frozenset({"github", "strategy", "matrix", "job", "runner"})
STEP = frozenset({"github", "inputs", "strategy", "matrix", "steps", "job", "runner", "env"})
OUTPUT_VALUE = STEP


def evaluate(text: str, contexts: Mapping[str, Any], allowed: frozenset[str] = STEP) -> str:
    """``text`` with each ``${{ a.b || c.d }}`` replaced by its value (missing lookups are empty,
    as GitHub's are; ``||`` takes the first non-empty). A context not ``allowed`` there fails."""

    def one(found: re.Match[str]) -> str:
        for term in (part.strip() for part in found[1].split("||")):
            if not _LOOKUP.fullmatch(term):
                raise AssertionError(f"expression not simulated here: {found[0]!r}")
            if term.split(".")[0] not in allowed:
                raise AssertionError(f"{found[0]!r}: context not available here")
            value: Any = contexts
            for key in term.split("."):
                value = value.get(key) if isinstance(value, Mapping) else None
            if value:
                return str(value)
        return ""

    return _EXPRESSION.sub(one, text)


def run_action(
    inputs: Mapping[str, str],
    *,
    workspace: Path,
    runner_temp: Path,
    github: Mapping[str, Any],
    env: Mapping[str, str],
) -> ActionRun:
    """Run the composite action's steps in order, stopping at the first that fails."""
    action = load_action()
    runs = action["runs"]
    assert runs["using"] == "composite"
    contexts: dict[str, Any] = {
        "github": {**github, "workspace": str(workspace), "action_path": str(ROOT)},
        "runner": {"temp": str(runner_temp), "os": "Linux"},
        "steps": {},
    }
    unknown = set(inputs) - set(action.get("inputs", {}))
    assert not unknown, f"inputs the action does not declare: {unknown}"
    contexts["inputs"] = {
        name: inputs[name]
        if name in inputs
        else evaluate(str(spec.get("default", "")), contexts, INPUT_DEFAULT)
        for name, spec in action.get("inputs", {}).items()
    }
    base = {
        **env,
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_REPOSITORY": str(github.get("repository", "")),
        "GITHUB_SHA": str(github.get("sha", "")),
        "RUNNER_TEMP": str(runner_temp),
    }
    result = ActionRun()
    job_files = runner_temp / "_runner_file_commands"
    job_files.mkdir(parents=True, exist_ok=True)
    env_file, path_file = job_files / "env", job_files / "path"
    env_file.write_text("")
    path_file.write_text("")
    for number, step in enumerate(runs["steps"]):
        assert "uses" not in step, "steps that use other actions are not simulated"
        assert step.get("shell") == "bash", "every run step names its shell"
        assert "if" not in step, "conditional steps are not simulated"
        step_id = step.get("id", f"step{number}")
        files = runner_temp / "_runner_file_commands" / step_id
        files.mkdir(parents=True, exist_ok=True)
        output, summary = files / "output", files / "summary"
        output.write_text("")
        summary.write_text("")
        script = files / "script.sh"
        script.write_text(evaluate(step["run"], contexts))
        step_env = {
            **base,
            **{key: evaluate(str(value), contexts) for key, value in step.get("env", {}).items()},
            **result.env,
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_ENV": str(env_file),
            "GITHUB_PATH": str(path_file),
        }
        if result.path:
            step_env["PATH"] = os.pathsep.join([*reversed(result.path), step_env["PATH"]])
        done = run_script(script, step_env, cwd=workspace, timeout=900)
        outputs = parse_file_commands(output.read_text())
        result.steps.append(
            StepRun(
                step_id, done.returncode, done.stdout, done.stderr, outputs, summary.read_text()
            )
        )
        contexts["steps"][step_id] = {"outputs": outputs}
        result.env = parse_file_commands(env_file.read_text())
        result.path = [line for line in path_file.read_text().splitlines() if line]
        if done.returncode != 0:
            return result
    result.outputs = {
        name: evaluate(str(spec["value"]), contexts, OUTPUT_VALUE)
        for name, spec in action.get("outputs", {}).items()
    }
    return result


def runner_env(path_first: Path | None = None) -> dict[str, str]:
    """The environment a step starts from: this one's, less what a runner would not have set,
    with ``path_first`` (a folder holding ``coverage-gate``) at the head of ``PATH``."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GITHUB_", "INPUT_", "RUNNER_"))
    }
    if path_first is not None:
        kept["PATH"] = f"{path_first}{os.pathsep}{kept.get('PATH', '')}"
    return kept
