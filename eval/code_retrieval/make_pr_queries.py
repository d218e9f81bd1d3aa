"""Regenerate ``pr.jsonl``: the ``pr`` suite's queries about real changes between click releases.

Each query is an issue written for this suite about one change listed in click's CHANGES.rst; its
``patch`` is the real diff of that change between two releases, cut down to the hunks that make it
(``git diff -U2`` hunk numbers below). Run from anywhere once the pr repository exists:

    python eval/code_retrieval/make_pr_queries.py $ASSAY_HOME/repos/pypi-sdist__click.git
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (id, base tag, head tag, {path: [hunk numbers]}, problem statement)
QUERIES: list[tuple[str, str, str, dict[str, list[int]], str]] = [
    (
        "click-8.1.4-zsh-fpath",
        "v8.1.3",
        "v8.1.7",
        {"src/click/shell_completion.py": [2]},
        "The generated zsh completion script only works when it is eval'd or sourced. If I save it as "
        "_myprog in a directory on $fpath so that zsh autoloads it, completion does nothing on the first "
        "TAB, because the script only registers itself with compdef instead of completing. The fish "
        "script also collects the response in a slow loop. Please make the shell scripts handle autoload.",
    ),
    (
        "click-8.1.4-echo-no-stream",
        "v8.1.3",
        "v8.1.7",
        {"src/click/utils.py": [11]},
        "When my app runs under pythonw.exe on Windows there is no console, sys.stdout is None, and every "
        "click.echo call crashes with AttributeError: 'NoneType' object has no attribute 'write'. Printing "
        "should just do nothing when no output stream is attached.",
    ),
    (
        "click-8.1.4-clear-slow",
        "v8.1.3",
        "v8.1.7",
        {"src/click/termui.py": [3]},
        "click.clear() is very slow on Windows: it starts a whole cmd process with os.system('cls') each "
        "time, so a TUI that redraws the screen flickers. Clearing the terminal could just write the ANSI "
        "escape sequence like on other platforms.",
    ),
    (
        "click-8.1.4-filename-surrogates",
        "v8.1.3",
        "v8.1.7",
        {"src/click/utils.py": [14, 15]},
        "With LANG=en_GB.UTF-8, passing a file whose name contains undecodable bytes makes my command crash "
        "with UnicodeEncodeError: surrogates not allowed, when click shows the name in an error message. "
        "Displaying a filename should never fail; replace invalid bytes with the replacement character.",
    ),
    (
        "click-8.1.8-pager-os-system",
        "v8.1.7",
        "v8.1.8",
        {"src/click/_termui_impl.py": [2, 3, 4, 5, 6, 7, 8]},
        "echo_via_pager probes for less by running os.system('(less) 2>/dev/null') and launches the pager "
        "with shell=True. In environments without a shell, or when PAGER names a program that is not "
        "installed, the text is silently lost instead of falling back to another pager. Please find the "
        "pager executable on PATH and use subprocess instead of os.system.",
    ),
    (
        "click-8.1.8-help-option-eager-order",
        "v8.1.7",
        "v8.1.8",
        {"src/click/core.py": [12, 13, 14]},
        "With context_settings help_option_names=['-h', '--help'] and another eager option such as "
        "--version, `prog --help --version` runs the version callback first. The help Option object is "
        "created again every time it is looked up, so ordering parameters by the order they were invoked "
        "cannot find it. The help option should be created once per command and reused.",
    ),
    (
        "click-8.1.8-empty-default-help",
        "v8.1.7",
        "v8.1.8",
        {"src/click/core.py": [21]},
        "An option declared with default='' and show_default=True shows no default at all in --help; I "
        'expected [default: ""]. Also a boolean flag whose default comes from default_map shows the '
        "default of the declaration rather than the default that is really used.",
    ),
    (
        "click-8.1.8-exception-color",
        "v8.1.7",
        "v8.1.8",
        {"src/click/exceptions.py": [0, 2, 3]},
        "I run my CLI with color=True so that styled output keeps its ANSI colors when piped, but when a "
        "command raises a ClickException the 'Error: ...' message is printed with the colors stripped. The "
        "error display should use the color setting of the context the exception came from.",
    ),
    (
        "click-8.1.8-option-name-error",
        "v8.1.7",
        "v8.1.8",
        {"src/click/core.py": [20, 23]},
        "A typo in @click.option('-') gives TypeError: Could not determine name for option, and in a big "
        "CLI I cannot tell which of the hundred options is wrong. The error should include the "
        "declarations that were given; the message for a nameless argument is unclear too.",
    ),
    (
        "click-8.1.8-bash-version-check",
        "v8.1.7",
        "v8.1.8",
        {"src/click/shell_completion.py": [0]},
        "Generating bash completion on Windows with git-bash warns that bash is too old, and on Linux my "
        "~/.bashrc prints a banner that breaks the version detection. The check that runs bash to read "
        "BASH_VERSION should find the bash executable on PATH and not load the user's rc file.",
    ),
    (
        "click-8.1.8-path-directory-message",
        "v8.1.7",
        "v8.1.8",
        {"src/click/types.py": [3]},
        "When a click.Path(dir_okay=False) argument is given a directory, the error says File 'name' is a "
        "directory with the name pasted between plain quotes, which looks broken for names that contain "
        "quotes or newlines. Quote the filename properly (repr) in that message.",
    ),
    (
        "click-8.2.0-command-name-suffix",
        "v8.1.8",
        "v8.2.0",
        {"src/click/decorators.py": [14]},
        "I name my command functions init_data_command and db_group to avoid clashing with other names, "
        "and the CLI then exposes them as init-data-command and db-group. When the command name is "
        "derived from the function name, suffixes like _command, _cmd, _group and _grp should be dropped.",
    ),
    (
        "click-8.2.0-progressbar-hidden",
        "v8.1.8",
        "v8.2.0",
        {"src/click/_termui_impl.py": [2, 3, 5, 7, 8, 12], "src/click/termui.py": [7, 9, 12]},
        "There is no way to turn off a progress bar: with --quiet I still want to iterate through "
        "click.progressbar but print nothing, and today the label is printed anyway when output is not a "
        "terminal. Please add a parameter to hide the progress bar completely.",
    ),
    (
        "click-8.2.0-choice-enum",
        "v8.1.8",
        "v8.2.0",
        {"src/click/types.py": [11, 12, 13]},
        "I would like to pass an Enum to click.Choice so that the option accepts the member names and my "
        "function receives the enum member. Today Choice only works with a list of strings and converting "
        "back is left to me. Choices of any type should be normalized to strings for matching.",
    ),
    (
        "click-8.2.1-runner-stdin-eof",
        "v8.2.0",
        "v8.2.1",
        {"src/click/testing.py": [0, 1, 2]},
        "In a test with CliRunner().invoke(cli, input='y\\n'), a command that prompts twice does not abort "
        "when the input runs out: the second prompt reads an empty string and loops forever. In a real "
        "terminal end of input raises EOFError and click aborts; the test runner should do the same.",
    ),
    (
        "click-8.2.1-runner-stderr-flush",
        "v8.2.0",
        "v8.2.1",
        {"src/click/testing.py": [3]},
        "result.stderr from CliRunner.invoke is sometimes missing the last message my command wrote to "
        "sys.stderr without a trailing newline; stdout is complete. The stderr stream is not flushed before "
        "its value is collected at the end of the invocation.",
    ),
    (
        "click-8.2.1-nested-group-completion",
        "v8.2.0",
        "v8.2.1",
        {"src/click/shell_completion.py": [0, 1]},
        "Shell completion breaks for nested groups: with cli -> group -> subgroup, typing `cli group "
        "subgroup <TAB>` suggests the commands of the parent group instead of those of the subgroup. The "
        "remaining arguments seem to be taken from the wrong context while resolving which command is "
        "being completed.",
    ),
    (
        "click-8.2.1-flag-value-type",
        "v8.2.0",
        "v8.2.1",
        {"src/click/core.py": [0]},
        "Since 8.2.0, @click.option('--upper', is_flag=True, type=click.BOOL) passes the wrong value: "
        "without flag_value, giving the flag does not produce True. The flag value should default to the "
        "opposite of the default whether or not a type is given.",
    ),
]


def _git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], capture_output=True, text=True, check=True
    ).stdout


def _patch(repo: str, base: str, head: str, files: dict[str, list[int]]) -> str:
    out = []
    for path, keep in files.items():
        diff = _git(repo, "diff", "-U2", base, head, "--", path)
        header, *hunks = re.split(r"(?m)^(?=@@ )", diff)
        if max(keep) >= len(hunks):
            raise SystemExit(f"{path} {base}..{head} has {len(hunks)} hunks, wanted {keep}")
        out.append(header + "".join(hunks[i] for i in keep))
    return "".join(out)


Spec = list[tuple[str, str, str, dict[str, list[int]], str]]


def write_queries(repo: str, name: str, queries: Spec, out: Path) -> None:
    """Write ``queries`` about the bare repository ``repo`` (named ``name`` in the rows) to ``out``."""
    commits = {t: _git(repo, "rev-parse", t).strip() for t in {q[1] for q in queries}}
    dates = {t: _git(repo, "log", "-1", "--format=%cI", t).strip() for t in commits}
    with open(out, "w", encoding="utf-8") as fh:
        for qid, base, head, files, statement in queries:
            row = {
                "instance_id": qid,
                "repo": name,
                "base_commit": commits[base],
                "created_at": dates[base],
                "problem_statement": statement,
                "patch": _patch(repo, base, head, files),
                "release_change": f"{base}..{head}",
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(queries)} queries to {out}")


if __name__ == "__main__":
    write_queries(sys.argv[1], "pypi-sdist/click", QUERIES, HERE / "pr.jsonl")
