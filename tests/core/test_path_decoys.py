"""A path spelling maps to one file, the one the reviewer's tool opened (DESIGN §6 rule 4).

Each decoy is a real capture with one read re-spelled, recorded against a real git repository
that holds the decoy next to the changed file: ``@src/api/handlers.py`` (``@`` is part of the
name except for pi's read tools, which drop exactly one), a file literally named
``src\\api\\handlers.py`` (backslashes are part of a POSIX name), and a symbolic link
``src/api/x`` to another folder (so ``src/api/x/../handlers.py`` opens ``decoy/handlers.py``).
The changed file ``src/api/handlers.py`` must never be verified by such a read.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coverage_gate.adapters import ADAPTERS
from coverage_gate.contracts.model import (
    EvidenceDocument,
    FileStatus,
    IssueKind,
    Mode,
    ModeSource,
    PathRejection,
    ReviewerOutput,
    Verdict,
)
from coverage_gate.core.paths import TreeUnavailableError
from coverage_gate.core.reconcile import ReviewerInput, ReviewInput, reconcile
from coverage_gate.edges.content import snapshot_tree
from coverage_gate.edges.gittree import GitTree
from coverage_gate.record.recording import RecordSettings, record_stream
from tests.conftest import CHANGED_FILES, DATA, REPO_ROOT

CHANGED = "src/api/handlers.py"
CLAIMED = ["src/api/handlers.py", "src/api/models.py", "src/util/strings.py", "README.md"]


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        check=True,
        text=True,
    )
    return result.stdout.strip()


@dataclass(frozen=True)
class Repo:
    path: Path
    with_link: str  # the commit holding the decoys and links
    head: str  # the checked-out commit after it: the folder link src/api/x is gone


def make_repo(root: Path) -> Repo:
    """The changed file, its decoys, and links; committed, then the folder link removed."""
    files = {
        CHANGED: "def handle():\n    return 'real'\n",
        "@src/api/handlers.py": "DECOY\n",
        "src\\api\\handlers.py": "DECOY\n",
        "decoy/handlers.py": "DECOY\n",
        "decoy/inner/keep.txt": "\n",
        "src/api/sub/keep.txt": "\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "src/api/x").symlink_to("../../decoy/inner")  # to another folder
    (root / "src/api/same").symlink_to("sub")  # to a sibling: '..' lands where it seems
    (root / "src/api/out").symlink_to("../../../elsewhere")  # out of the repository
    (root / "src/api/abs").symlink_to("/etc")  # out of the repository, absolute
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "decoys")
    with_link = git(root, "rev-parse", "HEAD")
    git(root, "rm", "-q", "src/api/x")
    git(root, "commit", "-q", "-m", "no folder link")
    return Repo(root, with_link, git(root, "rev-parse", "HEAD"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("decoys"))


# --- mutating the real captures ----------------------------------------------------------------


def _unreadable_arguments(node: Any) -> bool:
    """Whether an OTLP line holds a span whose tool arguments are not a JSON object."""
    if isinstance(node, dict):
        if node.get("key") == "gen_ai.tool.call.arguments":
            text = (node.get("value") or {}).get("stringValue")
            try:
                return not isinstance(json.loads(text), dict)
            except (TypeError, ValueError):
                return True
        return any(_unreadable_arguments(value) for value in node.values())
    if isinstance(node, list):
        return any(_unreadable_arguments(item) for item in node)
    return False


def _swap_keys(node: Any, old: str, new: str, keys: frozenset[str]) -> int:
    """Replace string values ``old`` under ``keys`` anywhere in ``node``; how many."""
    count = 0
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys and value == old:
                node[key] = new
                count += 1
            else:
                count += _swap_keys(value, old, new, keys)
        if node.get("key") == "gen_ai.tool.call.arguments":
            try:
                arguments = json.loads(node["value"]["stringValue"])
            except ValueError:
                arguments = None  # the capture's own broken arguments stay as they are
            if arguments is not None:
                found = _swap_keys(arguments, old, new, keys)
                node["value"]["stringValue"] = json.dumps(arguments)
                count += found
        if node.get("key") == "coverage_gate.path" and node["value"].get("stringValue") == old:
            node["value"]["stringValue"] = new
            count += 1
    elif isinstance(node, list):
        count += sum(_swap_keys(item, old, new, keys) for item in node)
    return count


def respell(capture: Path, old: str, new: str) -> bytes:
    """The capture with every tool argument path ``old`` spelled ``new`` instead.

    Lines of the wrong shape, and reads whose arguments cannot be read, that a crafted capture
    holds on purpose are left out: each could have read any file, which makes every claim lacking
    evidence unknown, and these tests are about how a path is spelled."""
    out: list[str] = []
    swapped = 0
    for raw in capture.read_text(encoding="utf-8").splitlines():
        obj = json.loads(raw)
        if "resourceSpans" in obj and not isinstance(obj["resourceSpans"], list):
            continue
        if _unreadable_arguments(obj):
            continue
        swapped += _swap_keys(obj, old, new, frozenset({"path", "file_path", "filePath"}))
        out.append(json.dumps(obj, separators=(",", ":")))
    assert swapped, f"{capture.name}: no read of {old!r} to re-spell"
    return ("\n".join(out) + "\n").encode()


@dataclass(frozen=True)
class Capture:
    source: str
    file: Path
    spelled: str  # how this capture spells the read of the changed file


CAPTURES = {
    "pi-rpc": Capture("pi-rpc", DATA / "pi-rpc" / "pi_b_overclaim.jsonl", CHANGED),
    "claude-code": Capture(
        "claude-code",
        DATA / "claude-code" / "claude_b_overclaim.jsonl",
        f"{REPO_ROOT}/{CHANGED}",
    ),
    "codex-rollout": Capture(
        "codex-rollout", DATA / "codex-rollout" / "codex_b_overclaim.rollout.jsonl", CHANGED
    ),
    "otlp-json (GenAI spans)": Capture(
        "otlp-json", DATA / "otlp-json" / "crafted_genai_agent.jsonl", CHANGED
    ),
    "otlp-json (recorded spans)": Capture(
        "otlp-json", DATA / "otlp-json" / "coverage_gate_claude_b_overclaim.jsonl", CHANGED
    ),
    "opencode": Capture("opencode", DATA / "opencode" / "opencode_capture.jsonl", CHANGED),
    "copilot-cli": Capture("copilot-cli", DATA / "copilot-cli" / "copilot_capture.jsonl", CHANGED),
    "gemini-cli": Capture("gemini-cli", DATA / "gemini-cli" / "gemini_b_overclaim.jsonl", CHANGED),
    "qwen-code": Capture(
        "qwen-code", DATA / "qwen-code" / "qwen_b_overclaim.jsonl", f"{REPO_ROOT}/{CHANGED}"
    ),
}


def record_with_tree(data: bytes, source: str, tree: GitTree, revision: str) -> EvidenceDocument:
    settings = RecordSettings(revision=revision, repo_root=REPO_ROOT, trees=lambda _root: tree)
    return record_stream(io.BytesIO(data), ADAPTERS[source], settings)


def decide(evidence: EvidenceDocument, revision: str) -> dict[str, FileStatus]:
    claims = ReviewerOutput(schema_version=1, agent_id="reviewer", inspected_files=CLAIMED)
    decision = reconcile(
        ReviewInput(
            repo="o/r",
            revision=revision,
            verdict_in=Verdict.APPROVE,
            mode=Mode.ENFORCE,
            mode_source=ModeSource.OVERRIDE,
            scope=CHANGED_FILES,
            reviewers=[ReviewerInput("reviewer", claims, evidence)],
            repo_root=REPO_ROOT,
        )
    )
    return {f.path: f.status for f in decision.reviewers[0].files}


@pytest.fixture
def tree(repo: Repo) -> Iterator[GitTree]:
    with GitTree(repo.path, repo.with_link) as opened:
        yield opened


def reads(document: EvidenceDocument) -> dict[str, int]:
    return {f.path: f.reads_succeeded for f in document.files}


def rejections(document: EvidenceDocument) -> list[str]:
    return [i.detail for i in document.issues if i.kind is IssueKind.PATH_REJECTED]


# --- the decoys --------------------------------------------------------------------------------

# How each format spells a read of the decoy file ``@src/api/handlers.py``: pi's read tools drop
# one leading "@", so pi reaches it as "@@src/..."; every other tool opens "@src/..." as written.
AT_DECOY = {
    "pi-rpc": "@@src/api/handlers.py",
    "claude-code": "@src/api/handlers.py",
    "codex-rollout": "@src/api/handlers.py",
    "otlp-json (GenAI spans)": "@src/api/handlers.py",
    "otlp-json (recorded spans)": "@src/api/handlers.py",
    "opencode": "@src/api/handlers.py",
    "copilot-cli": "@src/api/handlers.py",
    # Gemini CLI opens "@x" literally when that file exists, else "x": the stream cannot tell
    # which, so the read counts only for the literal name (here the decoy exists).
    "gemini-cli": "@src/api/handlers.py",
    "qwen-code": "@src/api/handlers.py",
}


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_a_leading_at_names_the_decoy_not_the_changed_file(name: str, tree: GitTree) -> None:
    """Reading ``@src/api/handlers.py`` (pi: ``@@src/...``) shows the decoy file of that name;
    it is evidence for that file only, and the changed file's claim is unsupported."""
    capture = CAPTURES[name]
    data = respell(capture.file, capture.spelled, AT_DECOY[name])
    evidence = record_with_tree(data, capture.source, tree, "rev")
    assert reads(evidence).get("@src/api/handlers.py") == 1
    assert reads(evidence).get(CHANGED, 0) == 0
    assert decide(evidence, "rev")[CHANGED] is FileStatus.UNSUPPORTED


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_backslashes_are_part_of_the_name(name: str, tree: GitTree) -> None:
    """Reading the file literally named ``src\\api\\handlers.py`` is evidence for that file, never
    for ``src/api/handlers.py``."""
    capture = CAPTURES[name]
    decoy = "src\\api\\handlers.py"
    spelled = f"{REPO_ROOT}/{decoy}" if capture.spelled.startswith("/") else decoy
    evidence = record_with_tree(
        respell(capture.file, capture.spelled, spelled), capture.source, tree, "rev"
    )
    assert reads(evidence).get(decoy) == 1
    assert reads(evidence).get(CHANGED, 0) == 0
    assert decide(evidence, "rev")[CHANGED] is FileStatus.UNSUPPORTED


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_dotdot_out_of_a_folder_link_is_rejected(name: str, tree: GitTree) -> None:
    """``src/api/x/../handlers.py`` with ``src/api/x`` a link to ``decoy/inner``: the OS opens
    ``decoy/handlers.py``, a tool collapsing ``..`` first opens ``src/api/handlers.py``. Which
    one was read cannot be told: the read is rejected, and the changed file is unsupported."""
    capture = CAPTURES[name]
    spelled = capture.spelled.replace("src/api/handlers.py", "src/api/x/../handlers.py")
    evidence = record_with_tree(
        respell(capture.file, capture.spelled, spelled), capture.source, tree, "rev"
    )
    assert reads(evidence).get(CHANGED, 0) == 0
    assert any(
        detail.startswith(PathRejection.PARENT_THROUGH_SYMLINK.value)
        and "decoy/handlers.py" in detail
        for detail in rejections(evidence)
    ), rejections(evidence)
    assert decide(evidence, "rev")[CHANGED] is FileStatus.UNSUPPORTED


# --- honest spellings still verify -------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CAPTURES))
@pytest.mark.parametrize("relative", ["src/../src/api/handlers.py", "src/api/same/../handlers.py"])
def test_dotdot_that_climbs_out_of_no_link_still_verifies(
    name: str, relative: str, tree: GitTree
) -> None:
    """``..`` out of real folders (or out of a link to a sibling, where the OS and a lexical tool
    agree) names the file it seems to: the changed file is verified."""
    capture = CAPTURES[name]
    spelled = f"{REPO_ROOT}/{relative}" if capture.spelled.startswith("/") else relative
    evidence = record_with_tree(
        respell(capture.file, capture.spelled, spelled), capture.source, tree, "rev"
    )
    assert reads(evidence)[CHANGED] == 1
    assert decide(evidence, "rev")[CHANGED] is FileStatus.VERIFIED


def test_a_pi_mention_still_verifies(tree: GitTree) -> None:
    """pi's ``@src/api/handlers.py`` is ``src/api/handlers.py`` (its read tools drop the ``@``)."""
    capture = CAPTURES["pi-rpc"]
    data = respell(capture.file, capture.spelled, "@src/api/handlers.py")
    evidence = record_with_tree(data, "pi-rpc", tree, "rev")
    assert reads(evidence)[CHANGED] == 1
    assert decide(evidence, "rev")[CHANGED] is FileStatus.VERIFIED


# --- the tree ----------------------------------------------------------------------------------


def _read_of(path: str) -> bytes:
    capture = CAPTURES["codex-rollout"]
    return respell(capture.file, capture.spelled, path)


@pytest.mark.parametrize(
    ("link", "reason"),
    [
        ("out", PathRejection.SYMLINK_OUTSIDE_ROOT),
        ("abs", PathRejection.SYMLINK_OUTSIDE_ROOT),
    ],
)
def test_dotdot_out_of_a_link_leaving_the_repository_is_rejected(
    link: str, reason: PathRejection, tree: GitTree
) -> None:
    evidence = record_with_tree(
        _read_of(f"src/api/{link}/../handlers.py"), "codex-rollout", tree, "rev"
    )
    assert reads(evidence).get(CHANGED, 0) == 0
    assert [d.split(":")[0] for d in rejections(evidence)] == [reason.value]


def test_dotdot_without_a_tree_is_rejected_as_unresolved() -> None:
    """No repository to ask (no tree given): a path with ``..`` names no file, with its own
    reason, and a path without ``..`` needs no tree."""
    data = _read_of("src/../src/api/handlers.py")
    settings = RecordSettings(revision="rev", repo_root=REPO_ROOT)
    evidence = record_stream(io.BytesIO(data), ADAPTERS["codex-rollout"], settings)
    assert reads(evidence).get(CHANGED, 0) == 0
    assert [d.split(":")[0] for d in rejections(evidence)] == ["parent_unresolved"]
    assert "src/api/models.py" in reads(evidence)


def test_dotdot_is_rejected_when_git_cannot_answer(repo: Repo) -> None:
    """A revision the repository does not hold: every ``..`` path is rejected, never guessed."""
    with GitTree(repo.path, "0" * 40) as missing:
        evidence = record_with_tree(
            _read_of("src/../src/api/handlers.py"), "codex-rollout", missing, "rev"
        )
    details = rejections(evidence)
    assert len(details) == 1
    assert details[0].startswith("parent_unresolved")
    assert "not a commit" in details[0]


def test_the_revision_not_the_checkout_is_asked(repo: Repo) -> None:
    """At the revision holding the link the read is rejected; at HEAD, where it is gone and the
    working tree is asked, ``src/api/x`` is nothing and ``..`` collapses as written."""
    data = _read_of("src/api/x/../handlers.py")
    with GitTree(repo.path, repo.with_link) as at_link:
        linked = record_with_tree(data, "codex-rollout", at_link, repo.with_link)
    with GitTree(repo.path, repo.head) as at_head:
        unlinked = record_with_tree(data, "codex-rollout", at_head, repo.head)
    assert reads(linked).get(CHANGED, 0) == 0
    assert reads(unlinked)[CHANGED] == 1


def test_the_checked_out_revision_is_asked_of_git_never_of_the_working_tree(
    tmp_path: Path,
) -> None:
    """When the revision is HEAD, its commit answers: a link made in the checkout after the
    commit is not the revision's (a reviewer cannot plant one); the working tree written as a
    tree (``snapshot_tree``) has it."""
    repo = make_repo(tmp_path / "repo")
    (repo.path / "src/api/y").symlink_to("../../decoy/inner")
    with GitTree(repo.path, repo.head) as tree:
        assert tree.symlink_target("src/api/y") is None
    with GitTree(repo.path, snapshot_tree(repo.path)) as tree:
        assert tree.symlink_target("src/api/y") == "../../decoy/inner"
        assert tree.symlink_target("src/api/out") == "../../../elsewhere"
        assert tree.symlink_target("src/api/handlers.py") is None
        assert tree.symlink_target("no/such/file") is None
    with GitTree(repo.path, repo.with_link) as tree:
        assert tree.symlink_target("src/api/y") is None  # not in that commit
        assert tree.symlink_target("src/api/x") == "../../decoy/inner"
        assert tree.symlink_target("src/api/handlers.py") is None
        assert tree.symlink_target("src/api/handlers.py/deeper") is None


def test_one_git_process_answers_a_whole_record(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several ``..`` reads, one ``git cat-file --batch`` process for the whole record."""
    started: list[list[str]] = []
    real_popen = subprocess.Popen

    def counting(args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        started.append(args)
        return real_popen(args, **kwargs)

    monkeypatch.setattr("coverage_gate.edges.gittree.subprocess.Popen", counting)
    capture = CAPTURES["codex-rollout"]
    data = respell(capture.file, CHANGED, "src/api/x/../handlers.py")
    data = data.replace(b'"src/api/models.py"', b'"src/../src/api/models.py"')
    data = data.replace(b'"src/api/handler.py"', b'"src/api/same/../handler.py"')
    with GitTree(repo.path, repo.with_link) as tree:
        evidence = record_with_tree(data, "codex-rollout", tree, "rev")
    assert [args[-2:] for args in started] == [["cat-file", "--batch"]]
    assert reads(evidence)["src/api/models.py"] == 1
    assert reads(evidence).get(CHANGED, 0) == 0


def test_no_git_on_path_leaves_dotdot_unresolved(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")
    with GitTree(repo.path, repo.with_link) as tree:
        evidence = record_with_tree(
            _read_of("src/../src/api/handlers.py"), "codex-rollout", tree, "rev"
        )
    details = rejections(evidence)
    assert len(details) == 1
    assert details[0].startswith("parent_unresolved")
    assert "git cannot be run" in details[0]


class _GoneGit:
    """A ``git cat-file`` that exited at once: its stdin's pipe is broken, even on close."""

    class _BrokenPipe(io.BytesIO):
        def write(self, data: Any) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        def close(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.stdin = self._BrokenPipe()
        self.stdout = io.BytesIO()
        self.stderr = io.BytesIO(b"fatal: cannot change to '/nowhere': No such file or directory\n")

    def wait(self, timeout: float | None = None) -> int:
        return 128

    def kill(self) -> None:
        pass


def test_a_git_that_already_exited_is_an_unavailable_tree_not_a_broken_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A root that is no repository: git exits before it is asked, and closing its stdin fails
    too. That is an unavailable tree (the ``..`` path is rejected), never a ``BrokenPipeError``
    escaping to the command line (which exits 1 with nothing said)."""
    monkeypatch.setattr("coverage_gate.edges.gittree.subprocess.Popen", _GoneGit)
    tree = GitTree("/nowhere", "rev")
    with pytest.raises(TreeUnavailableError, match="cannot change to"):
        tree.symlink_target("src/api")
    tree.close()
