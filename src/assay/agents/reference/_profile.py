"""The reference agent's profile: a folder of plain files, the only thing hillclimbing may edit.

    profile/
      system.md            the system prompt
      tools/<name>.md      one description per tool offered (a tool without a file is not offered)
      skills/<name>.md     optional: appended to the system prompt under "## Skill: <name>"

The built-in profile ships with the package (``assay/agents/reference/profile``); ``ReferenceHarness(profile=DIR)``
loads another. A missing system prompt, an unknown tool or an empty description is a ConfigError naming the file.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError

__all__ = ["DEFAULT_PROFILE", "INIT_COMMAND", "Profile", "init_profile", "load_profile", "profile_option"]

DEFAULT_PROFILE = Path(__file__).parent / "profile"
#: how a user gets a copy of the built-in profile to edit (hillclimb refuses to edit the built-in one)
INIT_COMMAND = "assay agent profile init agent-profile"


def init_profile(dest: Path) -> Path:
    """Copy the built-in profile to ``dest`` (a new or empty folder); a ConfigError when it holds files."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ConfigError("the profile folder exists and is not empty: name a new folder", path=str(dest))
    shutil.copytree(
        DEFAULT_PROFILE, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".*", "__pycache__")
    )
    return dest


def profile_option(profile: str | Path | None, harness: str) -> str | None:
    """A benchmark's ``--profile`` as given (None: the built-in one): the reference agent's folder, so with
    another ``--harness``, or when it is not a folder, a ConfigError naming the flag."""
    if not profile:
        return None
    if harness != "reference":
        raise ConfigError(f"--profile is the reference agent's folder, not --harness {harness}'s")
    if not Path(profile).is_dir():
        raise ConfigError("--profile: not a folder (the reference agent's profile)", path=str(profile))
    return str(profile)


@dataclass(frozen=True)
class Profile:
    path: Path
    system: str
    #: tool name -> the description the model is shown, in name order
    tools: dict[str, str]
    skills: dict[str, str] = field(default_factory=dict)

    def system_prompt(self) -> str:
        parts = [self.system.strip()]
        parts += [f"## Skill: {name}\n\n{text.strip()}" for name, text in self.skills.items()]
        return "\n\n".join(parts)


def _text(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc}", path=str(path)) from exc
    if not text.strip():
        raise ConfigError("empty file (a profile file holds text the model is shown)", path=str(path))
    return text


def load_profile(path: str | Path | None, known_tools: set[str], wanted: list[str] | None = None) -> Profile:
    """Read the profile folder at ``path`` (None: the built-in one).

    ``known_tools`` are the tools the agent can run; ``wanted`` (optional) are the ones to offer, each of which
    must have its description file.
    """
    root = Path(path) if path is not None else DEFAULT_PROFILE
    if not root.is_dir():
        raise ConfigError("agent profile folder not found (--profile)", path=str(root))
    system_file = root / "system.md"
    if not system_file.is_file():
        raise ConfigError("the profile has no system prompt (system.md)", path=str(system_file))
    tools_dir = root / "tools"
    if not tools_dir.is_dir():
        raise ConfigError("the profile has no tools/ folder (one <tool>.md per tool)", path=str(tools_dir))
    tools: dict[str, str] = {}
    for file in sorted(tools_dir.iterdir()):
        if file.name.startswith("."):
            continue
        if file.suffix != ".md" or not file.is_file():
            raise ConfigError("not a tool description (tools/<name>.md)", path=str(file))
        if file.stem not in known_tools:
            raise ConfigError(
                f"unknown tool {file.stem!r} (known: {', '.join(sorted(known_tools))})", path=str(file)
            )
        tools[file.stem] = _text(file).strip()
    if wanted is not None:
        for name in wanted:
            if name not in known_tools:
                raise ConfigError(f"unknown tool {name!r} (known: {', '.join(sorted(known_tools))})")
            if name not in tools:
                raise ConfigError(f"no description for tool {name!r}", path=str(tools_dir / f"{name}.md"))
        tools = {n: tools[n] for n in wanted}
    if not tools:
        raise ConfigError("the profile offers no tools (add tools/<name>.md)", path=str(tools_dir))
    skills: dict[str, str] = {}
    skills_dir = root / "skills"
    if skills_dir.is_dir():
        for file in sorted(skills_dir.glob("*.md")):
            skills[file.stem] = _text(file)
    return Profile(path=root, system=_text(system_file), tools=tools, skills=skills)
