"""Print pip constraints pinning every runtime dependency (and the postgres and redis
extras) to the lower bound pyproject.toml declares: `name==minimum`, one a line.

.ci/run installs these once in a venv of their own and runs the quick part of the suite,
so a declared lower bound that is too low fails CI instead of a user's install.
"""

import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)")


def minimums(project):
    requirements = list(project["dependencies"])
    for extra in ("postgres", "redis"):
        requirements += project["optional-dependencies"][extra]
    pins = []
    for requirement in requirements:
        match = REQUIREMENT.match(requirement)
        if match is None:
            sys.exit(f"no lower bound to pin in {requirement!r}")
        pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


if __name__ == "__main__":
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    print("\n".join(minimums(project)))
