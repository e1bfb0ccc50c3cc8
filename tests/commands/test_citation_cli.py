"""``reconcile`` replays citations against the repository under ``--repo-root`` at ``--revision``
(DESIGN §7.9-7.10), and takes the citation policy from the option, the environment, the flag
variant's payload or the default, recording which (DESIGN §8)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from coverage_gate.cli import app
from coverage_gate.contracts.model import (
    Capability,
    CitationPolicy,
    EvidenceDocument,
    FileEvidence,
    Mode,
    ModeSource,
    PolicySource,
)
from coverage_gate.core import reconcile as reconcile_module
from coverage_gate.errors import ExitCode
from coverage_gate.rollout.flags import (
    ModeResolution,
    VariantPolicies,
    effective_policies,
    policies_from_payload,
)
from tests._support.docs import section
from tests.conftest import reconcile_in
from tests.core.test_policies import features, payload, snapshot

runner = CliRunner()
ENV = {"OTEL_SDK_DISABLED": "true", "COVERAGE_GATE_FLAGS_DISK_COPY": "", "UNLEASH_URL": ""}
TAX = "RATE = 0.2\n\n\ndef tax(amount):\n    return amount * RATE\n"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def repository_with_tax(root: Path, text: str) -> str:
    """A new repository at ``root`` whose one commit holds ``src/tax.py`` as ``text``; its
    revision."""
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    (root / "src" / "tax.py").write_text(text, "utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "reviewed")
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def work(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository whose reviewed revision is not the checked-out commit, and a review of it:
    the reviewer read ``src/tax.py`` and cites one real line and one fabricated one."""
    root = tmp_path / "repo"
    revision = repository_with_tax(root, TAX)
    (root / "src" / "tax.py").write_text("RATE = 0.3\n", "utf-8")
    git(root, "commit", "-qam", "later")
    review = tmp_path / "review"
    review.mkdir()
    (review / "changed.txt").write_text("src/tax.py\n", "utf-8")
    (review / "claims.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "agent_id": "reviewer",
                "inspected_files": ["src/tax.py"],
                "findings": [
                    {
                        "body": "the rate is hard-coded",
                        "citations": [
                            {"path": "src/tax.py", "line": 1, "content": "RATE = 0.2"},
                            {"path": "src/tax.py", "line": 5, "content": "return amount * 1.2"},
                        ],
                    }
                ],
            }
        ),
        "utf-8",
    )
    (review / "e.json").write_text(
        EvidenceDocument(
            source="pi-rpc",
            revision=revision,
            stream_complete=True,
            capability=Capability.PER_FILE,
            files=[FileEvidence(path="src/tax.py", reads_succeeded=1)],
        ).model_dump_json(by_alias=True),
        "utf-8",
    )
    return root, review, revision


def decide(
    work: tuple[Path, Path, str], *extra: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    root, review, revision = work
    result = runner.invoke(
        app,
        reconcile_in(review, "acme/tax", revision, str(root), *extra),
        env={**ENV, **(env or {})},
    )
    assert result.exit_code == 0, result.output
    decision: dict[str, Any] = json.loads(result.stdout)
    return decision


def test_enforce_turns_the_approve_into_a_comment_naming_the_fabricated_citation(
    work: tuple[Path, Path, str],
) -> None:
    """The file is read at the reviewed revision, not the later checkout."""
    decision = decide(work, "--mode", "enforce")
    assert decision["verdict_out"] == "comment"
    assert decision["reasons"] == ["citations_failed"]
    (reviewer,) = decision["reviewers"]
    assert reviewer["coverage"] == "incomplete_citations"
    assert [c["outcome"] for c in reviewer["citations"]["checks"]] == ["matched", "failed"]
    assert (
        "- `src/tax.py` line 5, cited by `reviewer` as `return amount * 1.2`: line 5 reads "
        "`return amount * RATE`"
    ) in decision["note"]
    assert (decision["citation_policy"], decision["citation_policy_source"]) == (
        "downgrade",
        "default",
    )


def test_exit_code_1_when_the_citation_downgrade_is_enforced(work: tuple[Path, Path, str]) -> None:
    root, review, revision = work
    args = reconcile_in(review, "acme/tax", revision, str(root), "--mode", "enforce", "--exit-code")
    assert runner.invoke(app, args, env=ENV).exit_code == ExitCode.DOWNGRADED


def test_shadow_measures_and_keeps_the_approve(work: tuple[Path, Path, str]) -> None:
    decision = decide(work, "--mode", "shadow")
    assert decision["verdict_out"] == "approve"
    assert decision["would_downgrade"]
    assert decision["citations_would_downgrade"]


def test_the_citation_policy_option_accept_keeps_the_approve_and_is_recorded(
    work: tuple[Path, Path, str],
) -> None:
    decision = decide(work, "--mode", "enforce", "--citation-policy", "accept")
    assert decision["verdict_out"] == "approve"
    assert (decision["citation_policy"], decision["citation_policy_source"]) == ("accept", "cli")
    assert decision["citations_would_downgrade"]


def test_the_variant_payload_sets_the_citation_policy_per_repository(
    work: tuple[Path, Path, str],
) -> None:
    path = snapshot(work[1], features(payload({"citation_policy": "accept"}), variant="enforce"))
    from_payload = decide(work, "--flags", str(path))
    assert (from_payload["mode"], from_payload["verdict_out"]) == ("enforce", "approve")
    assert (from_payload["citation_policy"], from_payload["citation_policy_source"]) == (
        "accept",
        "payload",
    )
    by_env = decide(work, "--flags", str(path), env={"COVERAGE_GATE_CITATION_POLICY": "downgrade"})
    assert (by_env["citation_policy_source"], by_env["verdict_out"]) == ("env", "comment")
    by_option = decide(
        work,
        "--flags",
        str(path),
        "--citation-policy",
        "accept",
        env={"COVERAGE_GATE_CITATION_POLICY": "downgrade"},
    )
    assert (by_option["citation_policy_source"], by_option["verdict_out"]) == ("cli", "approve")


def test_a_bad_citation_policy_variable_or_payload_is_a_configuration_error(
    work: tuple[Path, Path, str],
) -> None:
    root, review, revision = work
    args = reconcile_in(review, "acme/tax", revision, str(root), "--mode", "enforce")
    bad_env = runner.invoke(app, args, env={**ENV, "COVERAGE_GATE_CITATION_POLICY": "lenient"})
    assert bad_env.exit_code == ExitCode.BAD_CONFIG
    assert "COVERAGE_GATE_CITATION_POLICY: 'lenient' is not one of accept, downgrade" in (
        bad_env.stderr
    )
    path = snapshot(review, features(payload({"citation_policy": "off"}), variant="enforce"))
    bad_payload = runner.invoke(
        app, reconcile_in(review, "acme/tax", revision, str(root), "--flags", str(path)), env=ENV
    )
    assert bad_payload.exit_code == ExitCode.BAD_CONFIG
    assert "citation_policy 'off' is not one of accept, downgrade" in bad_payload.stderr


def test_the_citation_policy_comes_from_option_env_payload_default_in_that_order() -> None:
    answered = ModeResolution(
        Mode.SHADOW,
        ModeSource.SNAPSHOT,
        "shadow",
        True,
        "answered",
        policies=policies_from_payload(payload({"citation_policy": "accept"})),
    )
    assert answered.policies == VariantPolicies(citation_policy=CitationPolicy.ACCEPT)
    bare = ModeResolution(Mode.SHADOW, ModeSource.FALLBACK, None, False, "fallback")
    cases = [
        (bare, {}, None, (CitationPolicy.DOWNGRADE, PolicySource.DEFAULT)),
        (answered, {}, None, (CitationPolicy.ACCEPT, PolicySource.PAYLOAD)),
        (
            answered,
            {"COVERAGE_GATE_CITATION_POLICY": ""},
            None,
            (CitationPolicy.ACCEPT, PolicySource.PAYLOAD),
        ),
        (
            answered,
            {"COVERAGE_GATE_CITATION_POLICY": "Downgrade"},
            None,
            (CitationPolicy.DOWNGRADE, PolicySource.ENV),
        ),
        (
            answered,
            {"COVERAGE_GATE_CITATION_POLICY": "downgrade"},
            CitationPolicy.ACCEPT,
            (CitationPolicy.ACCEPT, PolicySource.CLI),
        ),
    ]
    for resolution, env, cli, expected in cases:
        policies = effective_policies(resolution, env, citation_policy=cli)
        assert (policies.citation_policy, policies.citation_policy_source) == expected


def test_text_output_lists_the_failed_citation(work: tuple[Path, Path, str]) -> None:
    root, review, revision = work
    args = reconcile_in(review, "acme/tax", revision, str(root), "--mode", "enforce")
    args[args.index("json")] = "text"
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    assert "2 citation(s) replayed: 1 matched, 1 FAILED" in result.stdout
    assert "citation policy downgrade (default)" in result.stdout


def test_a_root_that_is_no_repository_leaves_citations_unavailable(
    work: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """Content not obtainable is never a failure: the Approve stands."""
    _, review, revision = work
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    result = runner.invoke(
        app,
        reconcile_in(review, "acme/tax", revision, str(elsewhere), "--mode", "enforce"),
        env=ENV,
    )
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["verdict_out"] == "approve"
    checks = decision["reviewers"][0]["citations"]["checks"]
    assert {(c["outcome"], c["reason"]) for c in checks} == {("unavailable", "content_unavailable")}


README_TAX = (
    'import math\n\nRATE = 0.2\n\n\ndef tax(amount):\n    """Tax due on amount."""\n'
    "    return round(amount * RATE, 2)\n"
)


def test_the_readme_citation_example_gives_the_note_it_shows(tmp_path: Path) -> None:
    """The README's reviewer output, replayed against the file it describes, gives its note."""
    text = section("Citations")
    output = text.split("```json\n", 1)[1].split("```", 1)[0]
    shown = text.split("```text\n", 1)[1].split("```", 1)[0]
    root = tmp_path / "repo"
    revision = repository_with_tax(root, README_TAX)
    (tmp_path / "claims.json").write_text(output, "utf-8")
    (tmp_path / "changed.txt").write_text("src/tax.py\n", "utf-8")
    (tmp_path / "e.json").write_text(
        EvidenceDocument(
            source="pi-rpc",
            revision=revision,
            stream_complete=True,
            capability=Capability.PER_FILE,
            files=[FileEvidence(path="src/tax.py", reads_succeeded=1)],
        ).model_dump_json(by_alias=True),
        "utf-8",
    )
    result = runner.invoke(
        app, reconcile_in(tmp_path, "acme/shop", revision, str(root), "--mode", "enforce"), env=ENV
    )
    assert result.exit_code == 0, result.output
    note = json.loads(result.stdout)["note"]
    assert note + "\n" == shown.replace("de55d4803475", revision[:12])


def test_a_crash_in_citation_replay_under_shadow_keeps_the_legacy_verdict(
    work: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shadow returns the control value: the legacy-only decision replays no citation, so a
    replay that fails cannot fail it too."""

    def broken(*_: object, **__: object) -> object:
        raise RuntimeError("replay broke")

    monkeypatch.setattr(reconcile_module, "replay", broken)
    decision = decide(work, "--mode", "shadow")
    assert (decision["mode"], decision["verdict_out"]) == ("shadow", "approve")
    assert "shadow evidence check failed (RuntimeError)" in decision["note"]
    assert decision["reviewers"][0]["citations"] is None
