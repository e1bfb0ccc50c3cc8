"""The cheap test before a command is split for writes (``may_write``, DESIGN §6 rule 20) lets
every write through: over commands made of the words the check knows, quoted and joined every
way, ``shell_write`` says what splitting every command would say."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coverage_gate.adapters._mutations import (
    _drop_heredoc_bodies,
    _script_write,
    _split,
    may_write,
    shell_write,
)


def _split_and_checked(command: str) -> object:
    """What ``shell_write`` says of ``command`` with no cheap test before it."""
    words = _split(_drop_heredoc_bodies(command))
    return None if words is None else _script_write(words)


WORDS = str.split(
    "rm rmdir unlink touch truncate mv cp ln install tee dd patch apply_patch applypatch "
    "git stash worktree reset apply clean restore checkout switch am cherry-pick revert "
    "merge rebase pull sed perl find xargs eval bash sh zsh env sudo nohup timeout command "
    "cat grep ls echo printf head diff show log status list --hard --cached -n -i -pi -e "
    "-ni --in-place -delete -exec -c -lc --help --check of=out.txt if=a.txt s/a/b/ {} + "
    "a.txt src/app.py /bin/rm ./mv HEAD~1 -- -f -rf -s 0 '1,$p'"
)
JOINS = [" ", " ", " ", "; ", " && ", " || ", " | ", "\n", " & ", " $(", ") ", " `", "` "]
REDIRECTIONS = [">", ">>", "2>&1", ">/dev/null", "<", "<<EOF", "<>", "&>", ">|"]


@st.composite
def commands(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        word = draw(st.sampled_from(WORDS))
        quoting = draw(st.sampled_from(["", "'", '"', "split", "backslash"]))
        if quoting in ("'", '"'):
            word = f"{quoting}{word}{quoting}"
        elif quoting == "split" and len(word) > 1:
            word = f"{word[0]}''{word[1:]}"  # r''m: the shell joins it into rm
        elif quoting == "backslash":
            word = f"\\{word}"
        parts.append(word)
        redirecting = draw(st.integers(0, 3)) == 0
        parts.append(draw(st.sampled_from(JOINS + REDIRECTIONS if redirecting else JOINS)))
    return "".join(parts)


@settings(max_examples=5000, deadline=None)
@given(commands())
def test_the_cheap_test_never_hides_a_write(command: str) -> None:
    assert shell_write(command) == _split_and_checked(command)


def test_commands_that_only_read_are_not_split() -> None:
    for command in [
        "sed -n '1,$p' src/a.py && git diff HEAD~1 -- src/b.py && cat src/c.py",
        "grep -rn 'def main' src | head -20",
        "git log --oneline -5; git show HEAD:src/a.py",
        "cat src/a.py",
    ]:
        assert not may_write(command), command


def test_each_kind_of_write_passes_the_cheap_test() -> None:
    for command in [
        "echo x > a.txt",
        "r''m a.txt",
        "\\rm a.txt",
        "/bin/rm a.txt",
        "sed -i s/a/b/ a.txt",
        "sed --in-place s/a/b/ a.txt",
        "perl -pi -e s/a/b/ a.txt",
        "git -C . stash",
        "git cherry-pick abc",
        "bash -c 'tee a.txt'",
        "find . -delete",
        "dd if=/dev/zero of=a.txt",
    ]:
        assert may_write(command), command
        assert shell_write(command) is not None, command
