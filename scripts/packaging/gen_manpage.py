#!/usr/bin/env python3
"""Writes a man page (roff) for a torchlint binary from its own `--help` texts and, for
`torchlint`, the rule catalog it prints (`torchlint rules`): the page says what the
installed binary does, never what a hand-kept copy remembers.

usage: gen_manpage.py BINARY OUTPUT.1 "one-line description"
"""
import datetime
import os
import re
import subprocess
import sys


def run(binary, *args):
    out = subprocess.run([binary, *args], capture_output=True, text=True, check=False).stdout
    return out.replace(binary, os.path.basename(binary))  # "Usage: build/torchlint" -> "Usage: torchlint"


def roff_escape(text):
    text = text.replace("\\", "\\e")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.splitlines())


def verbatim(text):
    return ".nf\n" + roff_escape(text.rstrip()) + "\n.fi\n"


def main():
    binary, output, description = sys.argv[1], sys.argv[2], sys.argv[3]
    name = os.path.basename(binary)
    version = run(binary, "--version").strip() or name
    epoch = os.environ.get("SOURCE_DATE_EPOCH")  # reproducible builds fix the date
    date = datetime.date.fromtimestamp(int(epoch)) if epoch else datetime.date.today()
    top = run(binary, "--help")
    page = [f'.TH {name.upper()} 1 "{date.isoformat()}" "{version}" "User Commands"',
            ".SH NAME", f"{name} \\- {description}",
            ".SH SYNOPSIS", f".B {name}", "[\\fIOPTIONS\\fR] ...",
            ".SH DESCRIPTION", verbatim(top)]
    commands = []
    in_section = False
    for line in top.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            in_section = True
            continue
        m = re.match(r"\s{2}([a-z][\w-]*)\s", line) if in_section else None
        if m:
            commands.append(m.group(1))
    for command in commands:
        page += [f".SH COMMAND: {command.upper()}", verbatim(run(binary, command, "--help"))]
    if name == "torchlint":
        rules = run(binary, "rules")
        if rules.strip():
            page += [".SH RULES", "Each rule's documentation: \\fBtorchlint rule\\fR \\fICODE\\fR.", verbatim(rules)]
    page += [".SH EXIT STATUS", "0: nothing found; 1: findings (or, for audit, failed items or a score below "
             "\\-\\-fail\\-under); 2: an error (a bad option, an unreadable file).",
             ".SH SEE ALSO", "torchlint(1), torchlint-cpp(1), torchlint-probe(1)"]
    with open(output, "w") as f:
        f.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
