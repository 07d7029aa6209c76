#!/usr/bin/env python3
"""Writes torchlint's bash completion from the built binary's own `--help` texts, so the
completion never disagrees with the options the binary has.

usage: gen_completion.py TORCHLINT OUTPUT
"""
import re
import subprocess
import sys


def help_text(binary, *args):
    return subprocess.run([binary, *args, "--help"], capture_output=True, text=True, check=False).stdout


def options(text):
    found = set()
    for line in text.splitlines():
        # CLI11 lists options as "  -o,--output-file TEXT  ..." or "  --select TEXT ...".
        m = re.match(r"\s+((?:-{1,2}[\w-]+)(?:,\s*-{1,2}[\w-]+)*)", line)
        if m:
            found.update(o.strip() for o in m.group(1).split(","))
    return sorted(found)


def subcommands(text):
    names, in_section = [], False
    for line in text.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            in_section = True
            continue
        if in_section:
            m = re.match(r"\s{2}([a-z][\w-]*)\s", line)
            if m:
                names.append(m.group(1))
            elif line.strip() and not line.startswith(" "):
                in_section = False
    return names


def main():
    binary, output = sys.argv[1], sys.argv[2]
    top = help_text(binary)
    commands = subcommands(top)
    if not commands:
        sys.exit("gen_completion: no subcommands found in `torchlint --help`")
    cases = []
    for command in commands:
        opts = " ".join(options(help_text(binary, command)))
        cases.append(f'    {command}) opts="{opts}" ;;')
    script = f"""# bash completion for torchlint (generated from its --help by gen_completion.py)
_torchlint() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} command="" opts word
  for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
    case "$word" in -*) ;; *) command=$word; break ;; esac
  done
  if [[ -z $command ]]; then
    COMPREPLY=($(compgen -W "{' '.join(commands)} help --help --version" -- "$cur"))
    return
  fi
  case "$command" in
{chr(10).join(cases)}
    *) opts="" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
complete -o filenames -F _torchlint torchlint
"""
    with open(output, "w") as f:
        f.write(script)


if __name__ == "__main__":
    main()
