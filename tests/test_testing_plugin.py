"""The pytest plugin for bots' own test suites (`tactful.testing`, README): a dry-run world that
sends through the real gate, isolated from the project's own config, home and keyring."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tactful.core.errors import DoNotEngage
from tactful.testing import DryRunWorld

EXAMPLE = '''
import pytest
from tactful.core.errors import DoNotEngage

def test_my_bot_never_answers_a_flagged_person(tactful_world):
    tactful_world.flag("x", "mallory")
    with pytest.raises(DoNotEngage):
        tactful_world.send("x", "hi @alice, meet @mallory", to="alice")
    reply = tactful_world.send("x", "thanks @alice!", to="alice")
    assert reply.handle == "alice" and tactful_world.outbox() == [reply]
'''


def test_a_flagged_person_is_refused_and_the_rest_lands_in_the_outbox(
        tactful_world: DryRunWorld) -> None:
    tactful_world.flag("bluesky", "mallory.bsky.social")
    with pytest.raises(DoNotEngage) as refused:
        tactful_world.send("bluesky", "hi @mallory.bsky.social")
    assert refused.value.exit_code == 3
    sent = tactful_world.send("bluesky", "hello @alice.bsky.social",
                              to="alice.bsky.social")
    assert sent.platform == "bluesky" and sent.mentions == ("alice.bsky.social",)
    assert tactful_world.outbox() == [sent]


def test_a_projects_own_test_suite_uses_it_without_its_config_leaking(tmp_path: Path) -> None:
    project = tmp_path / "mybot"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_bot.py").write_text(EXAMPLE)
    # The project's own config would send for real; the fixture must not read it.
    (project / "tactful.yaml").write_text("platforms:\n  x:\n    dry_run: false\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(project / "tests")], cwd=project, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
