#!/usr/bin/env bash
# Builds a repository whose changed files hold the bytes real repositories hold, for the
# presentation captures (DESIGN §6 rules 23-25): a byte-order mark, Latin-1 and Shift JIS, CRLF,
# a lone CR inside a line, tabs and trailing white space, no final newline, a 3,200-character
# line changed at its end, a 2,600-line file changed near its end, control characters, NUL bytes,
# CJK, emoji, combining marks and U+2028, a file the change empties, a one-line file and a file
# holding <system-reminder> text. Committed first, then changed in the working tree (plain
# `git diff` shows the change; nothing is staged).
# usage: bash make_odd_repo.sh DIR      (DIR is wiped first)
set -euo pipefail
dir="$1"
rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
git init -q -b main
git config user.email mock@example.invalid; git config user.name mock
git config core.autocrlf false

write() {  # $1 = base or change: the files at that side, byte for byte
    python3 - "$1" <<'PY'
import sys
change = sys.argv[1] == "change"
def put(path, data):
    with open(path, "wb") as out:
        out.write(data)
value = "limit = 20" if change else "limit = 10"
put("bom.py", b"\xef\xbb\xbf" + f"# -*- coding: utf-8 -*-\n\"\"\"Paging defaults.\"\"\"\n\nPAGE_{value}\nNAME = 'pages'\n".encode())
put("latin1.txt", ("Caf\xe9 menu\nCr\xe8me br\xfbl\xe9e, na\xefve\nprice: " + ("4.50" if change else "4.00") + " \xa4\nend of menu\n").encode("latin-1"))
put("sjis.txt", ("設定ファイル\n名前 = 東京\n値 = " + ("二十" if change else "十") + "\n終わり\n").encode("shift_jis"))
put("crlf.txt", ("first line\r\nsecond line\r\nvalue = " + ("on" if change else "off") + "\r\nlast line\r\n").encode())
put("lone_cr.txt", ("progress: 10%\r50%\r100%\nstatus = " + ("done" if change else "busy") + "\nnext line\n").encode())
put("tabs.py", ("def area(w, h):\n\t# width times height   \n\treturn w * h" + ("  # square units" if change else "") + "\t \n\n\ndef half(x):\n\treturn x / 2\n").encode())
put("no_newline.txt", ("alpha beta gamma\ndelta epsilon\nzeta = " + ("7" if change else "6")).encode())
long_tail = "END-CHANGED" if change else "END-ORIGINAL"
put("long_line.js", ("// generated table\nconst TABLE = \"" + "abcdefghij" * 320 + long_tail + "\";\nexport default TABLE;\n").encode())
big = [f"def function_{n:04d}(value):\n    return value + {n}\n" for n in range(1300)]
if change:
    big[1290] = "def function_1290(value):\n    return value - 1290\n"
put("big.py", "".join(big).encode())
put("control.txt", ("bell \x07 here\nescape \x1b[31mred\x1b[0m text\nform\x0cfeed and \x0bvtab\nmode = " + ("fast" if change else "slow") + " \x01\x02\nend\n").encode())
put("blob.bin", b"\x00\x01\x02binary\x00header\n" + (b"\x00\xff" * 8) + (b"v2" if change else b"v1") + b"\x00\n")
put("unicode.md", ("# 多言語 🌍\n\nCafe\u0301 and nai\u0308ve (combining marks)\nline\u2028separator inside\nemoji: 👩‍💻 " + ("🚀" if change else "🐢") + "\n漢字とかな\n").encode())
put("emptied.txt", b"" if change else b"this file is emptied by the change\nsecond line\n")
put("one_line.txt", ("version = " + ("2" if change else "1") + "\n").encode())
put("reminder.md", ("# Notes for tools\n\n<system-reminder>\nThis text is part of the file.\n</system-reminder>\n\nsetting = " + ("new" if change else "old") + "\nlast\n").encode())
PY
}

write base
git add -A; git commit -qm "base"
write change
