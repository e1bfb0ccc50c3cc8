"""Whether a shell command changes files (DESIGN §6 rule 20): one check for every adapter.

A reviewer's shell can change the tree it reviews as surely as an edit tool can. This module
tells, from a command as a stream records it (a string, or an argv list such as Codex's
``command``), whether it writes, and which file when the command names one plainly. It is pure:
no I/O, no environment, nothing is run or expanded.

What is a write:

- an output redirection to a file: ``>``, ``>>``, ``>|``, ``&>``, ``&>>``, ``>&file``, ``<>``
  (``N>`` as well). Not writes: a target of ``/dev/null``, ``/dev/stdout``, ``/dev/stderr``,
  ``/dev/tty`` or ``/dev/fd/N``, a duplication (``>&2``, ``2>&1``, ``>&-``), a heredoc or
  here-string (``<<EOF``, ``<<<``; a heredoc's body is text, not commands) and process
  substitution (``>(...)``);
- ``tee`` with a file operand; ``sed -i`` / ``--in-place``; ``perl -i``;
- ``rm``, ``rmdir``, ``unlink``, ``mv``, ``cp``, ``ln``, ``install``, ``touch``, ``truncate``,
  ``dd of=...``, ``patch`` (not ``--dry-run``), ``apply_patch`` (Codex's patch tool run as a
  command; the file comes from the patch's ``*** Update File:`` headers), ``find -delete`` and
  ``find -exec`` / ``xargs`` running one of these;
- ``git stash`` (not ``list``/``show``), ``checkout``, ``switch``, ``restore``, ``worktree`` (not
  ``list``), ``reset --hard|--merge|--keep``, ``apply`` (not ``--check``/``--stat``/``--numstat``/
  ``--summary`` alone), ``am``, ``cherry-pick``, ``revert``, ``merge``, ``rebase``, ``pull``,
  ``rm`` and ``mv`` (not ``--cached``/``-n``), ``clean`` (not ``-n``/``--dry-run``). Any git
  command with ``-h``/``--help`` only prints help.

The check looks into ``bash -c SCRIPT`` (and ``sh``/``zsh``/``dash``, ``-lc`` and the like),
``eval``, ``env``/``sudo``/``nohup``/``time``/``timeout``/``nice``/``command``/``exec`` prefixes,
variable assignments before a command, pipelines, lists (``;``, ``&&``, ``||``, ``&``, newlines),
subshells and command substitutions (``$(...)``, backticks).

``path`` is the one file the command changes when it is plain (no ``$``, backtick, glob or ``~``
in it, and only one file changed): raw, as written, relative to the command's directory.
``cp``'s is its destination, ``mv``'s its source (the file taken from where it was), ``rm``'s the
file removed, a redirection's its target. Otherwise ``None``.

What it cannot tell is not a write: a command whose quotes do not close (``shlex`` cannot split
it), a program that writes on its own (``python -c 'open(...)'``, ``npm install``, a script), a
command built at run time. The check is conservative on purpose: a false write would say an honest
reviewer changed the code it reviewed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["ShellWrite", "apply_patch_paths", "argv_write", "may_write", "shell_write"]


@dataclass(frozen=True, slots=True)
class ShellWrite:
    """A command that changes files: ``path`` (see the module docstring) and ``why`` (what in it
    writes, such as ``"redirection"``, ``"sed -i"`` or ``"git stash"``)."""

    why: str
    path: str | None = None


# a command longer than this is not split (a bound on work, not on what a write is)
MAX_COMMAND_CHARS = 1 << 20

_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# prefixes that run the rest of the words as a command: name -> options that take a value
_PREFIXES: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset({"-I", "-L", "-n", "-P", "-d", "-E", "-s", "-a"}),
}
_OPERAND_WRITERS = frozenset({"rm", "rmdir", "unlink", "touch", "truncate"})
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_GIT_ALWAYS = frozenset({"switch", "am", "cherry-pick", "revert", "merge", "rebase", "pull"})
_GIT_APPLY_DRY = frozenset({"--check", "--stat", "--numstat", "--summary"})
_GIT_HARD_RESETS = frozenset({"--hard", "--merge", "--keep"})
_SEPARATORS = frozenset({"\n", "`", "$"})
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.MULTILINE)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_DEV_FD = re.compile(r"/dev/fd/\d+|/proc/self/fd/\d+")
# a run of operator characters the splitter keeps together (``)>``, ``2>&1;``), longest first
_OPERATOR = re.compile(r"&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>\(|<\(|&&|\|\||\|&|;;|[<>|&;()]")


def shell_write(command: str) -> ShellWrite | None:
    """Whether the shell command ``command`` changes files; ``None`` when it does not or when
    that cannot be told (unbalanced quotes, too long)."""
    if not isinstance(command, str) or len(command) > MAX_COMMAND_CHARS:
        return None
    if not may_write(command):
        return None  # no redirection and no word of a program that writes: nothing to split
    words = _split(_drop_heredoc_bodies(command))
    if words is None:
        return None
    return _script_write(words)


def may_write(command: str) -> bool:
    """A cheap test that ``shell_write`` passes every command it calls a write: a ``>`` (every
    redirection that writes has one), or, with quotes and backslashes taken out (they only join
    a word's parts), a word that names a program that writes, a git subcommand that does, or a
    command that runs another (``sed`` and ``perl`` only beside an option with ``i`` in it)."""
    if ">" in command:
        return True
    plain = command.translate(_QUOTING)
    return _WRITER_WORD.search(plain) is not None or (
        _IN_PLACE_PROGRAM.search(plain) is not None and _IN_PLACE_OPTION.search(plain) is not None
    )


def argv_write(argv: Sequence[str]) -> ShellWrite | None:
    """Whether the command ``argv`` (a program and its arguments, no shell between: Codex's
    ``["bash", "-lc", "..."]``) changes files."""
    if isinstance(argv, str) or not all(isinstance(word, str) for word in argv):
        return None
    words = [_quote(word) for word in argv]
    return _simple_write(words, depth=0)


def apply_patch_paths(patch: str) -> tuple[str, ...]:
    """The files a Codex ``apply_patch`` text changes (``*** Update|Add|Delete File:`` and
    ``*** Move to:`` headers), in order, each once."""
    if not isinstance(patch, str):
        return ()
    found = _PATCH_FILE.findall(patch) + _PATCH_MOVE.findall(patch)
    return tuple(dict.fromkeys(found))


# ---------------------------------------------------------------------------------------------
# splitting: words keep their quotes, so an operator is told from a quoted ``">"``


def _split(script: str) -> list[str] | None:
    lexer = shlex.shlex(script, posix=False, punctuation_chars=True)
    lexer.whitespace = " \t\r"
    lexer.commenters = ""
    lexer.wordchars += "$#{},@%+:^!~=[]\\"
    try:
        words = list(lexer)
    except ValueError:  # quotes that do not close: cannot tell
        return None
    exploded: list[str] = []
    for word in words:
        exploded.extend(_OPERATOR.findall(word) if _is_operator(word) else (word,))
    return exploded


def _drop_heredoc_bodies(script: str) -> str:
    """The script without its heredoc bodies (text fed to a command, not commands)."""
    if "<<" not in script:
        return script
    lines = script.split("\n")
    kept: list[str] = []
    ends: list[str] = []
    for line in lines:
        if ends:
            if line.strip() == ends[0]:
                ends.pop(0)
            continue
        kept.append(line)
        ends.extend(match.group(2) for match in _HEREDOC.finditer(line))
    return "\n".join(kept)


def _quote(word: str) -> str:
    """An argv word as the splitter would have kept it: quoted when it is not plain."""
    if word and all(ch.isalnum() or ch in "-_./=:,+@%" for ch in word):
        return word
    return shlex.quote(word)


def _unquote(word: str) -> str | None:
    """A word's value, or ``None`` when it is not plain (expansions, globs, ``~``)."""
    if word[:1] == "'" and word[-1:] == "'" and len(word) >= 2:
        return word[1:-1]
    try:
        parts = shlex.split(word)
    except ValueError:
        return None
    if len(parts) != 1:
        return None
    value = parts[0]
    unquoted_text = word.replace("'", "").replace('"', "")
    if any(ch in unquoted_text for ch in "$`*?[~{") and not word.startswith("'"):
        return None
    return value


def _is_operator(word: str) -> bool:
    return bool(word) and all(ch in "();<>|&" for ch in word)


# ---------------------------------------------------------------------------------------------
# scripts: lists of simple commands


def _script_write(words: list[str], depth: int = 0) -> ShellWrite | None:
    """The first write among the simple commands of ``words`` (split, quotes kept)."""
    if depth > 4:
        return None
    found: list[ShellWrite] = []
    current: list[str] = []
    comment = False
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if comment and word != "\n":
            continue
        comment = False
        if word.startswith("#"):  # a comment, to the end of its line
            comment = True
            continue
        if word in _SEPARATORS or (_is_operator(word) and not ("<" in word or ">" in word)):
            if word == "$" and index < len(words) and words[index] != "(":
                current.append(word)  # a lone ``$`` before a word: part of an argument
                continue
            _collect(found, current, depth)
            current = []
            continue
        if _is_operator(word):  # a redirection
            target = words[index] if index < len(words) else ""
            if target in {"$", "`"}:
                target = "$(...)"  # a substitution: a file, which one cannot be told
            elif _is_operator(target) or target == "\n":
                target = ""
            else:
                index += 1
            write = _redirection_write(word, target)
            if write is not None:
                found.append(write)
            if "(" in word:  # process substitution ``>(`` / ``<(``: its own command follows
                _collect(found, current, depth)
                current = []
            continue
        current.append(word)
    _collect(found, current, depth)
    return _merge(found)


def _collect(found: list[ShellWrite], words: list[str], depth: int) -> None:
    if words:
        write = _simple_write(words, depth)
        if write is not None:
            found.append(write)


def _merge(found: list[ShellWrite]) -> ShellWrite | None:
    if not found:
        return None
    paths = {write.path for write in found}
    if len(found) == 1 or (len(paths) == 1 and None not in paths):
        return found[0]
    return ShellWrite(why=found[0].why)


def _redirection_write(operator: str, target: str) -> ShellWrite | None:
    if ">" not in operator or "(" in operator or not target:
        return None  # input, heredoc, here-string, process substitution, nothing after it
    if operator == ">&" and (
        target.isdigit() or target in {"-", "$(...)"} or target[:-1].isdigit()
    ):
        return None  # ``>&2``, ``2>&1``, ``>&-``, ``>&3-``: a duplication (``>&file`` writes)
    value = _unquote(target)
    if value is not None and (value in _NOT_FILES or _DEV_FD.fullmatch(value)):
        return None
    return ShellWrite(why="redirection", path=value)


# ---------------------------------------------------------------------------------------------
# simple commands


def _simple_write(words: list[str], depth: int) -> ShellWrite | None:
    words = [word for word in words if word != "\\"]
    while words and _is_assignment(words[0]):
        words = words[1:]
    if not words:
        return None
    name = _unquote(words[0])
    if name is None:
        return None
    name = name.rsplit("/", 1)[-1]
    args = words[1:]
    if name in _SHELLS:
        return _shell_c_write(args, depth)
    if name == "eval":
        return _nested(" ".join(_unquote(arg) or "" for arg in args), depth)
    if name == "xargs":  # the command runs on operands read from input: which cannot be told
        write = _simple_write([*_after_options(args, _PREFIXES[name], name), "-"], depth)
        return None if write is None else ShellWrite(why=write.why)
    if name in _PREFIXES:
        return _simple_write(_after_options(args, _PREFIXES[name], name), depth)
    if name == "find":
        return _find_write(args, depth)
    check = _PROGRAMS.get(name)
    return None if check is None else check(name, args)


def _apply_patch_write(_name: str, args: list[str]) -> ShellWrite:
    paths = apply_patch_paths(" ".join(_unquote(arg) or "" for arg in args))
    return ShellWrite(why="apply_patch", path=paths[0] if len(paths) == 1 else None)


def _is_assignment(word: str) -> bool:
    head, eq, _ = word.partition("=")
    return bool(eq) and head.isidentifier()


def _nested(script: str, depth: int) -> ShellWrite | None:
    words = _split(_drop_heredoc_bodies(script))
    return None if words is None else _script_write(words, depth + 1)


def _shell_c_write(args: list[str], depth: int) -> ShellWrite | None:
    for index, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
            if index + 1 < len(args):
                script = _unquote(args[index + 1])
                return None if script is None else _nested(script, depth)
            return None
        if not arg.startswith("-"):
            return None  # ``bash script.sh``: a script this check cannot see into
    return None


def _after_options(args: list[str], valued: frozenset[str], name: str) -> list[str]:
    index = 0
    while index < len(args):
        arg = args[index]
        if _is_assignment(arg) and name in {"env", "sudo"}:
            index += 1
        elif arg == "--":
            return args[index + 1 :]
        elif arg in valued:
            index += 2
        elif arg.startswith("-") and len(arg) > 1:
            index += 1
        elif name == "timeout" or (name == "nice" and arg.lstrip("+-").isdigit()):
            return args[index + 1 :]  # the duration, then the command
        else:
            return args[index:]
    return []


def _operands(args: list[str]) -> list[str]:
    operands: list[str] = []
    only = False
    for arg in args:
        if only or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        elif arg == "--":
            only = True
    return operands


def _operands_write(name: str, args: list[str], *, pick: str) -> ShellWrite | None:
    options = [arg for arg in args if arg.startswith("-")]
    if name in {"rm", "rmdir", "unlink", "touch", "truncate", "mv", "cp", "ln", "install"} and (
        "--help" in options or "--version" in options
    ):
        return None
    operands = _operands(args)
    if name == "truncate":
        operands = _operands(_drop_valued(args, {"-s", "--size", "-r", "--reference"}))
    if name == "install":
        operands = _operands(_drop_valued(args, {"-m", "-o", "-g", "-t", "--mode"}))
    if name == "tee":
        operands = [arg for arg in operands if (_unquote(arg) or arg) not in _NOT_FILES]
        if not operands:
            return None  # ``tee`` with no file passes its input on and writes nothing
    if not operands:
        return None
    if name in {"cp", "mv", "ln"} and any(arg in {"-t", "--target-directory"} for arg in args):
        return ShellWrite(why=name)
    chosen: str | None
    if pick == "one":
        chosen = operands[0] if len(operands) == 1 else None
    elif pick == "first":
        chosen = operands[0] if len(operands) == 2 else None
    else:
        chosen = operands[-1] if len(operands) == 2 else None
    return ShellWrite(why=name, path=None if chosen is None else _unquote(chosen))


def _drop_valued(args: list[str], valued: set[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in valued:
            skip = True
        else:
            kept.append(arg)
    return kept


def _in_place_write(name: str, args: list[str]) -> ShellWrite | None:
    """``sed -i`` / ``perl -i``: options are read as getopt does (``-e`` / ``-f`` take a value,
    the rest of a cluster after them is that value)."""
    valued = {"e", "f", "l"} if name == "sed" else {"e", "E", "I", "M", "m", "x", "C", "d", "D"}
    in_place = False
    script_given = False
    operands: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in {"--in-place"} or arg.startswith("--in-place="):
            in_place = True
        elif arg in {"--expression", "--file"}:
            skip = script_given = True
        elif arg.startswith("--"):
            script_given = script_given or arg.startswith(("--expression=", "--file="))
        elif arg.startswith("-") and len(arg) > 1:
            for position, letter in enumerate(arg[1:], start=1):
                if letter == "i":
                    in_place = True
                    break  # the rest is a backup suffix
                if letter in valued:
                    script_given = script_given or letter in {"e", "f"}
                    skip = position == len(arg) - 1
                    break
        else:
            operands.append(arg)
    if not in_place:
        return None
    files = operands if script_given else operands[1:]
    path = _unquote(files[0]) if len(files) == 1 else None
    return ShellWrite(why=f"{name} -i", path=path)


def _dd_write(_name: str, args: list[str]) -> ShellWrite | None:
    for arg in args:
        if arg.startswith("of="):
            value = _unquote(arg[3:]) if arg[3:] else None
            if value is not None and (value in _NOT_FILES or _DEV_FD.fullmatch(value)):
                return None
            return ShellWrite(why="dd", path=value)
    return None


def _patch_write(_name: str, args: list[str]) -> ShellWrite | None:
    if any(arg in {"--dry-run", "--help", "--version", "-v"} for arg in args):
        return None
    operands = _operands(_drop_valued(args, {"-p", "-i", "-o", "-d", "-D", "-r", "-B", "-F"}))
    path = _unquote(operands[0]) if len(operands) == 1 else None
    return ShellWrite(why="patch", path=path)


def _find_write(args: list[str], depth: int) -> ShellWrite | None:
    for index, arg in enumerate(args):
        if arg == "-delete":
            return ShellWrite(why="find -delete")
        if arg in {"-exec", "-execdir", "-ok", "-okdir"}:
            command: list[str] = []
            for word in args[index + 1 :]:
                if word in {";", "\\;", "';'", '";"', "+"}:
                    break
                command.append(word)
            write = _simple_write(command, depth)
            if write is not None:
                return ShellWrite(why=write.why)
    return None


def _git_write(_name: str, args: list[str]) -> ShellWrite | None:
    index = 0
    while index < len(args):  # global options before the subcommand
        arg = args[index]
        if arg in _GIT_VALUE_OPTIONS:
            index += 2
        elif arg in {"-h", "--help", "--version"}:
            return None
        elif arg.startswith("-"):
            index += 1
        else:
            break
    if index >= len(args):
        return None
    sub = _unquote(args[index]) or ""
    rest = args[index + 1 :]
    if any(arg in {"-h", "--help"} for arg in rest):
        return None
    if sub in _GIT_ALWAYS:
        return ShellWrite(why=f"git {sub}")
    check = _GIT_SUBCOMMANDS.get(sub)
    return None if check is None else check(f"git {sub}", rest)


def _git_stash(why: str, rest: list[str]) -> ShellWrite | None:
    first = _unquote(rest[0]) if rest else None
    return None if first in {"list", "show"} else ShellWrite(why=why)


def _git_worktree(why: str, rest: list[str]) -> ShellWrite | None:
    first = _unquote(rest[0]) if rest else None
    return None if first in {"list", None} else ShellWrite(why=why)


def _git_reset(why: str, rest: list[str]) -> ShellWrite | None:
    return ShellWrite(why=why) if _GIT_HARD_RESETS & set(rest) else None


def _git_apply(why: str, rest: list[str]) -> ShellWrite | None:
    options = {arg.split("=", 1)[0] for arg in rest if arg.startswith("-")}
    if options & _GIT_APPLY_DRY and "--apply" not in options:
        return None
    return ShellWrite(why=why)


def _git_clean(why: str, rest: list[str]) -> ShellWrite | None:
    dry = any(arg == "--dry-run" or _short_has(arg, "n") for arg in rest)
    return None if dry else ShellWrite(why=why)


def _git_rm_mv(why: str, rest: list[str]) -> ShellWrite | None:
    if any(arg in {"--cached", "-n", "--dry-run"} for arg in rest):
        return None
    operands = _operands(rest)
    wanted = 1 if why == "git rm" else 2
    pick = operands[0] if len(operands) == wanted else None
    return ShellWrite(why=why, path=None if pick is None else _unquote(pick))


def _git_restore(why: str, rest: list[str]) -> ShellWrite | None:
    if "--staged" in rest and not any(arg in {"--worktree", "-W"} for arg in rest):
        return None  # the index only
    operands = _operands(_drop_valued(rest, {"-s", "--source"}))
    path = _unquote(operands[0]) if len(operands) == 1 else None
    return ShellWrite(why=why, path=path)


def _git_checkout(why: str, rest: list[str]) -> ShellWrite:
    if "--" in rest:
        files = rest[rest.index("--") + 1 :]
        path = _unquote(files[0]) if len(files) == 1 else None
        return ShellWrite(why=why, path=path)
    return ShellWrite(why=why)  # a branch, or files: which files cannot be told


_Check = Callable[[str, list[str]], "ShellWrite | None"]
_GIT_SUBCOMMANDS: dict[str, _Check] = {
    "stash": _git_stash,
    "worktree": _git_worktree,
    "reset": _git_reset,
    "apply": _git_apply,
    "clean": _git_clean,
    "rm": _git_rm_mv,
    "mv": _git_rm_mv,
    "restore": _git_restore,
    "checkout": _git_checkout,
}


def _one(name: str, args: list[str]) -> ShellWrite | None:
    return _operands_write(name, args, pick="one")


def _first(name: str, args: list[str]) -> ShellWrite | None:
    return _operands_write(name, args, pick="first")


def _last(name: str, args: list[str]) -> ShellWrite | None:
    return _operands_write(name, args, pick="last")


# programs that change files, each with its check: (program name, its words) -> the write
_PROGRAMS: dict[str, _Check] = {
    "git": _git_write,
    "sed": _in_place_write,
    "perl": _in_place_write,
    "tee": _one,
    **dict.fromkeys(_OPERAND_WRITERS, _one),
    "mv": _first,
    "cp": _last,
    "ln": _last,
    "install": _last,
    "dd": _dd_write,
    "patch": _patch_write,
    "apply_patch": _apply_patch_write,
    "applypatch": _apply_patch_write,
}


def _short_has(arg: str, letter: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]


_QUOTING = str.maketrans("", "", "'\"\\")
# the names ``shell_write`` looks at (a program, a git subcommand, a shell, ``eval``, ``find``,
# ``xargs``), as a whole word: a path's last part (``/bin/rm``) counts, a part of a word does not
_WRITER_WORD = re.compile(
    r"(?<![\w-])(?:"
    + "|".join(
        sorted(
            map(
                re.escape,
                (_PROGRAMS.keys() - {"git", "sed", "perl"})
                | _GIT_SUBCOMMANDS.keys()
                | _GIT_ALWAYS
                | _SHELLS
                | {"eval", "find", "xargs"},
            ),
            key=len,
            reverse=True,
        )
    )
    + r")(?![\w-])"
)
_IN_PLACE_PROGRAM = re.compile(r"(?<![\w-])(?:sed|perl)(?![\w-])")
_IN_PLACE_OPTION = re.compile(r"(?<![\w-])-[\w.-]*i")
