"""A full rebuild of the index (`tactful reindex`, docs/search-and-desk.md): every document
in, in id order, with the same schema as an index kept up to date write by write."""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings

from tactful.core.memory import index, personfile
from tactful.core.memory.home import Home
from tactful.core.memory.person import Entry, OpenItem, Person, Pin
from tactful.core.memory.settings import MemorySettings

from .test_personfile import people

TZ = ZoneInfo("America/New_York")
START = datetime(2026, 6, 1, 9, tzinfo=TZ)


def write_people(root: Path, count: int) -> None:
    for platform in ("x", "bluesky"):
        (root / "people" / platform).mkdir(parents=True, exist_ok=True)
    for n in range(count):
        platform = ("x", "bluesky")[n % 2]
        # Later people have older entries: ids (times) do not follow the order files are read.
        at = START - timedelta(hours=n)
        person = Person(platform=platform, handle=f"user{n:04d}", display_name=f"User {n}",
                        entries=[Entry(at=at, kind="reply", direction="inbound",
                                       they=f"word{n}a", topics=["eval"]),
                                 Entry(at=at + timedelta(days=400), kind="reply",
                                       direction="outbound", me=f"word{n}b",
                                       open=[OpenItem(f"todo{n}")])],
                        pins=[Pin(f"pin{n}", "them", "2026-05-01")])
        (root / "people" / platform / f"{person.handle}.md").write_text(
            personfile.dumps(person, TZ), encoding="utf-8")


def contents(home: Path) -> tuple[list[tuple[object, ...]], ...]:
    db = sqlite3.connect(home / index.FILE)
    try:
        return (db.execute("SELECT d.id, p.platform, p.handle, d.kind, d.at, d.important,"
                           " f.body, f.topics, f.who FROM docs d JOIN people p USING (pid)"
                           " JOIN docs_fts f ON f.rowid = d.id ORDER BY d.id").fetchall(),
                db.execute("SELECT type, name, sql FROM sqlite_master"
                           " ORDER BY name").fetchall())
    finally:
        db.close()


def rebuilt(root: Path) -> tuple[list[tuple[object, ...]], ...]:
    skipped = index.rebuild(Home(root), MemorySettings(tz=TZ), ids=True)
    assert skipped == []
    return contents(root)


def test_a_rebuild_writing_its_documents_in_several_rounds_indexes_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_people(tmp_path, 520)  # past the 500 files after which a rebuild writes what it read
    at_once = rebuilt(tmp_path)
    monkeypatch.setattr(index, "TEXT_ROWS_HELD", 1)
    in_rounds = rebuilt(tmp_path)
    assert in_rounds == at_once
    documents = at_once[0]
    assert len(documents) == 520 * 4  # the person, two entries, a pin
    assert [row[0] for row in documents] == sorted(row[0] for row in documents)


def test_every_person_and_word_is_found_after_a_rebuild(tmp_path: Path) -> None:
    write_people(tmp_path, 520)
    rebuilt(tmp_path)
    db = sqlite3.connect(tmp_path / index.FILE)
    try:
        for n in (0, 499, 500, 519):
            for word in (f"word{n}a", f"word{n}b", f"todo{n}", f"pin{n}"):
                hits = db.execute("SELECT p.handle FROM docs_fts f JOIN docs d ON d.id = f.rowid"
                                  " JOIN people p USING (pid) WHERE docs_fts MATCH ?",
                                  (word,)).fetchall()
                assert hits == [(f"user{n:04d}",)]
    finally:
        db.close()


def test_a_rebuilt_index_has_every_table_and_index_of_the_schema(tmp_path: Path) -> None:
    write_people(tmp_path, 3)
    names = {name for _, name, _ in rebuilt(tmp_path)[1]}
    wanted = {re.match(r"CREATE (?:VIRTUAL )?(?:TABLE|INDEX) (\w+)", statement)[1]  # type: ignore[index]
              for statement in index._SCHEMA}
    assert wanted <= names
    db = sqlite3.connect(tmp_path / index.FILE)
    try:
        plan = " ".join(str(row) for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM docs WHERE pid = 1"))
    finally:
        db.close()
    assert "docs_pid" in plan


def test_a_rebuilt_index_takes_later_writes_in_time_order(tmp_path: Path) -> None:
    write_people(tmp_path, 3)
    home, settings = Home(tmp_path), MemorySettings(tz=TZ)
    index.rebuild(home, settings, ids=True)
    person = personfile.read(tmp_path / "people" / "x" / "user0000.md", TZ, "x", "user0000")
    person.entries.append(Entry(at=START + timedelta(days=900), kind="reply",
                                direction="inbound", they="newest words"))
    (tmp_path / "people" / "x" / "user0000.md").write_text(personfile.dumps(person, TZ))
    db, skipped = index.open_fresh(home, settings, every_file=True)
    try:
        assert skipped == []
        newest = db.execute("SELECT f.body FROM docs_fts f ORDER BY f.rowid DESC"
                            " LIMIT 1").fetchone()
    finally:
        db.close()
    assert newest == ("newest words",)


def documents_as_first_written(person: Person) -> list[tuple[object, ...]]:
    """The documents of a person as the index first made them, plainly: the reference the
    quicker docs_of must match."""
    def epoch(value: datetime | None) -> int | None:
        return int(value.timestamp()) if value is not None else None

    who = " ".join(filter(None, [person.handle, f"@{person.handle}", person.display_name]))
    docs: list[tuple[object, ...]] = [("person", epoch(person.last_seen), bool(person.flags),
                                       "", "", who)]
    for entry in person.entries:
        opens = [i.text for i in entry.open]
        body = " ".join(filter(None, [entry.they, entry.me, *opens, entry.withheld]))
        important = bool(entry.me) or entry.withheld is not None or any(
            i.resolved_at is None for i in entry.open)
        docs.append(("entry", epoch(entry.at), important, body, " ".join(entry.topics), who))
    for older in person.compacted:
        body = " ".join([older.summary, *(i.text for i in older.open)])
        docs.append(("compact", epoch(older.at), any(i.resolved_at is None for i in older.open),
                     body, "", who))
    for pin in person.pins:
        try:
            at = epoch(datetime.fromisoformat(pin.on)) if len(pin.on) == 10 else None
        except ValueError:
            at = None  # a day no clock holds (0001-01-01): the pin is kept, without a time
        docs.append(("pin", at, False, pin.text, "", who))
    return docs


@settings(max_examples=300, deadline=None)
@given(people)
def test_what_is_searchable_of_a_person_read_from_their_file_is_what_it_always_was(
        person: Person) -> None:
    read = personfile.loads(personfile.dumps(person, TZ), TZ)
    made = index.docs_of(read)
    assert [tuple(type(v).__name__ for v in doc) for doc in made] == [
        tuple(type(v).__name__ for v in doc) for doc in documents_as_first_written(read)]
    assert made == documents_as_first_written(read)


def test_a_pin_dated_on_a_day_no_clock_holds_is_still_found(tmp_path: Path) -> None:
    write_people(tmp_path, 1)
    path = tmp_path / "people" / "x" / "user0000.md"
    person = personfile.read(path, TZ, "x", "user0000")
    person.pins.append(Pin(text="zanzibarish running joke", by="them", on="0001-01-01"))
    path.write_text(personfile.dumps(person, TZ))
    index.rebuild(Home(tmp_path), MemorySettings(tz=TZ), ids=True)
    db = sqlite3.connect(tmp_path / index.FILE)
    try:
        found = db.execute("SELECT body FROM docs_fts WHERE docs_fts MATCH 'zanzibarish'")
        assert found.fetchall() == [("zanzibarish running joke",)]
    finally:
        db.close()


@settings(max_examples=200, deadline=None)
@given(people)
def test_the_open_items_a_rebuild_indexes_are_the_persons_unresolved_ones_oldest_first(
        person: Person) -> None:
    # Made in the same pass as the documents (index._rows_of), they must still be what the
    # person's own list says, in its order: the desk reads them newest first, ties in this order.
    read = personfile.loads(personfile.dumps(person, TZ), TZ)
    docs: list[tuple[object, ...]] = []
    texts: list[tuple[object, ...]] = []
    open_items: list[tuple[object, ...]] = []
    index._rows_of(read, 7, 0, docs, texts, open_items)
    assert open_items == [(7, int(at.timestamp()), item.text) for at, item in read.open_items()]
    assert [row[0] for row in docs] == [row[0] for row in texts]
