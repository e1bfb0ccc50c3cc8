"""Every command's exit code and stdout on each kind of error, held to the README's table (its
"Exit codes" section): 2 usage (the command line is wrong, a mistyped option value included), 3
bad input (a file or folder missing or unusable), 4 bad configuration (a flags snapshot that
cannot be used). On every one of them nothing is written to stdout, and stderr says why. Each
case runs ``coverage-gate`` as a whole process, in a folder the test made."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._support.docs import section
from tests.conftest import lying_reconcile_args, run_cli

#: The kinds of error, each with the words that open its row of the README's table.
KINDS = {2: "usage", 3: "bad input", 4: "bad configuration"}

#: (case id, kind, arguments; ``{tmp}`` is the test's folder): at least one case of each kind a
#: command has.
CASES: list[tuple[str, int, list[str]]] = [
    ("record-unknown-option", 2, ["record", "--bogus"]),
    ("record-unknown-format", 2, ["record", "s.jsonl", "--format", "nope", "--revision", "r"]),
    ("record-missing-stream", 3, ["record", "{tmp}/none.jsonl", "--format", "pi-rpc",
                                  "--revision", "r", "-o", "{tmp}/e.json"]),
    ("run-unknown-format", 2, ["run", "--format", "nope", "-o", "{tmp}/e.json", "--", "true"]),
    ("run-output-folder-missing", 3, ["run", "--format", "pi-rpc", "--revision", "r",
                                      "-o", "{tmp}/none/e.json", "--", "true"]),
    ("reconcile-not-owner-name", 2, ["reconcile", "--repo", "shop", "--revision", "r",
                                     "--verdict", "approve"]),
    ("reconcile-missing-claims", 3, ["reconcile", "--repo", "acme/api", "--revision", "r",
                                     "--verdict", "approve", "--changed", "{tmp}/changed.txt",
                                     "--claims", "{tmp}/none.json"]),
    ("reconcile-missing-snapshot", 4, ["{lying}", "--mode", "auto", "--flags", "{tmp}/none.json"]),
    ("reconcile-snapshot-folder", 4, ["{lying}", "--mode", "auto", "--flags", "{tmp}"]),
    ("report-criterion-out-of-range", 2, ["report", "--telemetry-dir", "{tmp}",
                                          "--min-evidence", "99"]),
    ("report-missing-folder", 3, ["report", "--telemetry-dir", "{tmp}/none"]),
    ("replay-no-candidate", 2, ["replay", "{tmp}"]),
    ("replay-missing-folder", 3, ["replay", "{tmp}/none", "--mode", "enforce"]),
    ("replay-missing-snapshot", 4, ["replay", "{tmp}", "--flags", "{tmp}/none.json"]),
    ("replay-snapshot-folder", 4, ["replay", "{tmp}", "--flags", "{tmp}"]),
    ("receipts-verify-no-folder-given", 2, ["receipts", "verify"]),
    ("receipts-verify-no-receipt", 3, ["receipts", "verify", "{tmp}"]),
    ("flags-unknown-option", 2, ["flags", "--bogus"]),
    ("flags-missing-snapshot", 4, ["flags", "--repo", "acme/api", "--flags", "{tmp}/none.json"]),
    ("flags-snapshot-folder", 4, ["flags", "--repo", "acme/api", "--flags", "{tmp}"]),
    ("snapshot-unknown-option", 2, ["snapshot", "--bogus"]),
    ("snapshot-not-a-repository", 3, ["snapshot", "--repo-root", "{tmp}"]),
    ("formats-unknown-format", 2, ["formats", "nope"]),
    ("formats-check-missing-stream", 3, ["formats", "--check", "{tmp}/none.jsonl"]),
    ("schema-unknown-contract", 2, ["schema", "nope"]),
    ("demo-unknown-option", 2, ["demo", "--bogus"]),
    ("config-unknown-option", 2, ["config", "--bogus"]),
]  # fmt: skip


def readme_kinds() -> dict[int, str]:
    """The README's "Exit codes" table: code -> the meaning's first words."""
    rows = re.findall(
        r"^\| (\d) \| ([^|]+)\|", section("Exit codes", page="README.md"), flags=re.MULTILINE
    )
    return {int(code): meaning.strip() for code, meaning in rows}


def test_the_kinds_are_the_readmes() -> None:
    table = readme_kinds()
    for code, kind in KINDS.items():
        assert table[code].startswith(kind), (code, table[code])


def test_every_command_has_a_case() -> None:
    commands = {args[0] for _, _, args in CASES} - {"{lying}"} | {"reconcile"}
    listing = run_cli("--help").stdout.split("Commands:", 1)[1]
    listed = set(re.findall(r"^  (\w+) ", listing, flags=re.MULTILINE))
    assert len(listed) >= 12, listing
    assert listed - {"github"} <= commands  # github's errors: tests/commands/test_github.py


@pytest.mark.parametrize(
    ("kind", "args"), [(k, a) for _, k, a in CASES], ids=[c for c, _, _ in CASES]
)
def test_an_error_exits_with_its_kind_and_writes_nothing_to_stdout(
    tmp_path: Path, kind: int, args: list[str]
) -> None:
    (tmp_path / "changed.txt").write_text("src/api.py\n")
    argv: list[str] = []
    for arg in args:
        if arg == "{lying}":
            argv += [str(a) for a in lying_reconcile_args(tmp_path)]
        else:
            argv.append(arg.replace("{tmp}", str(tmp_path)))
    done = run_cli(*argv, env={"COVERAGE_GATE_TELEMETRY_DIR": str(tmp_path / "telemetry")})
    assert done.returncode == kind, (KINDS[kind], done.returncode, done.stderr)
    assert done.stdout == ""
    assert done.stderr.strip(), "stderr says why"
    if kind != 2:  # one error style (a usage error is click's, under the usage line)
        command = " ".join(
            word for word in argv[:2] if word in ("pull", "verify") or word == argv[0]
        )
        assert re.search(rf"^coverage-gate {command}: error: ", done.stderr, re.MULTILINE), (
            done.stderr
        )
