"""Many writers at once (docs/search-and-desk.md, "Many writers at once"; docs/memory.md,
"Writes"): nothing lost, no writer waits on the desk, the desk still shows every change when
read, and hand edits are still caught between tactful's own writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tactful.core.memory import identity
from tactful.core.memory.atomic import locked
from tactful.core.memory.home import Home

WRITER = """
import sys
from tactful.core.cli.main import main
home, writer, writes, people = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for n in range(writes):
    k = (writer + n) % people
    code = main(["--home", home, "remember", "x", f"p{k}", "--kind", "reply",
                 "--they", f"token{writer}x{n} about sourdough", "--id", str(1000 + k)])
    if code != 0:
        sys.exit(code)
"""


def _writers(home: Path, count: int, writes: int, people: int) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TACTFUL_")}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home), str(w), str(writes),
                               str(people)], env=environ, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for w in range(count)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "desk was not regenerated" not in err  # a busy desk is left due, not an error


def test_concurrent_writers_lose_no_entry_no_id_and_the_desk_shows_them(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "p0", "--kind", "reply", "--they", "first").code == 0
    _writers(home, count=6, writes=4, people=5)  # writers share people: same-person races too
    texts = {k: (home / "people" / "x" / f"p{k}.md").read_text() for k in range(5)}
    for writer in range(6):
        for n in range(4):
            k = (writer + n) % 5
            assert f"token{writer}x{n} " in texts[k], (writer, n)
    for k in range(5):  # every writer's id marker survived the others' writes
        assert identity.handles_for(Home(home), "x", str(1000 + k)) == [f"p{k}"]
    found = cli("search", "sourdough", "--limit", "100", "--json")
    assert found.code == 0 and found.out.count('"handle"') == 24
    desk = cli("hot").out
    assert all(f"x/@p{k}" in desk for k in range(5))


def test_a_writer_never_waits_for_the_desk_and_the_next_one_catches_up(  # type: ignore[no-untyped-def]
        cli, home: Path, monkeypatch) -> None:
    monkeypatch.setenv("TACTFUL_LOCK_TIMEOUT", "30")
    assert cli("remember", "x", "early", "--kind", "reply", "--they", "hi").code == 0
    with locked(home / ".locks" / "desk.lock"):  # someone else is regenerating the desk
        done = cli("remember", "x", "during", "--kind", "reply", "--they", "hi")
        assert done.code == 0 and done.err == ""  # neither waited 30 s nor gave up
        assert (home / ".locks" / "desk.due").exists()
        assert "x/@during" not in (home / "hot.md").read_text()
    assert cli("remember", "x", "after", "--kind", "reply", "--they", "hi").code == 0
    desk = (home / "hot.md").read_text()
    assert "x/@during" in desk and "x/@after" in desk
    assert not (home / ".locks" / "desk.due").exists()


def test_hot_shows_a_change_left_due(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("remember", "x", "early", "--kind", "reply", "--they", "hi").code == 0
    with locked(home / ".locks" / "desk.lock"):
        assert cli("remember", "x", "during", "--kind", "reply", "--they", "hi").code == 0
    assert "x/@during" in cli("hot").out


def test_a_hand_made_file_after_concurrent_writes_is_still_caught(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    _writers(home, count=3, writes=2, people=3)
    assert cli("check", "x", "renamed", "--id", "777").code == 0  # the map is fresh: no one
    (home / "people" / "x" / "troll.md").write_text(
        "---\nplatform: x\nhandle: troll\nid: '777'\ndo_not_engage: true\n---\n")
    assert cli("check", "x", "renamed", "--id", "777").code == 3
    assert cli("remember", "x", "p0", "--kind", "reply", "--they", "more").code == 0
    assert identity.handles_for(Home(home), "x", "777") == ["troll"]  # not stamped over


def test_an_in_place_hand_edit_reaches_the_desk_when_it_is_read(  # type: ignore[no-untyped-def]
        cli, home: Path) -> None:
    assert cli("remember", "x", "alpha", "--kind", "reply", "--they", "hi").code == 0
    assert "x/@alpha" in cli("hot").out
    path = home / "people" / "x" / "alpha.md"
    with open(path, "r+", encoding="utf-8") as f:  # in place: the folder's mtime stays
        text = f.read().replace("handle: alpha\n", "handle: alpha\ndo_not_engage: true\n")
        f.seek(0)
        f.write(text)
    assert "x/@alpha" not in cli("hot").out
