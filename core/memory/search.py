"""Search over the index: every token quoted, one score per result (docs/search-and-desk.md).

score = 3 × relevance + 1 × recency + 0.5 × importance, where relevance is BM25 normalized to
0..1 within the query, recency halves every 14 days, and importance is 1 for an entry with an
open item, a withheld (flagged) message or a reply of mine.
"""

from __future__ import annotations

import heapq
import re
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

HALF_LIFE_DAYS = 14.0
WEIGHTS = (3.0, 1.0, 0.5)
_TOKEN = re.compile(r"\S+")
_WORDY = re.compile(r"\w", re.UNICODE)


_FIELDS = ("platform", "handle", "kind", "at", "snippet", "relevance", "recency", "importance",
           "score")


class Hit:
    """One result. A plain class, not a dataclass: `tactful search` runs as a command, and
    generating a dataclass is part of every start (README, Speed)."""

    __slots__ = _FIELDS

    def __init__(self, platform: str, handle: str, kind: str, at: int | None, snippet: str,
                 relevance: float, recency: float, importance: float, score: float) -> None:
        self.platform, self.handle, self.kind, self.at = platform, handle, kind, at
        self.snippet, self.relevance, self.recency = snippet, relevance, recency
        self.importance, self.score = importance, score

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hit) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]  # equal by value, and not read-only

    def __repr__(self) -> str:
        return f"Hit({', '.join(f'{k}={v!r}' for k, v in self.as_dict().items())})"


def match_expression(query: str, joiner: str) -> str | None:
    """Quote every token so no user text is ever FTS5 syntax; None when nothing is searchable."""
    tokens = _tokens(query)
    return _joined(tokens, joiner) if tokens else None


def _tokens(query: str) -> list[str]:
    return [t for t in _TOKEN.findall(query) if _WORDY.search(t)]


def _joined(tokens: list[str], joiner: str) -> str:
    return f" {joiner} ".join('"' + t.replace('"', '""') + '"' for t in tokens)


# A word in more documents than this is not weighed by BM25. BM25's weight of a word comes from
# counting every document that holds it, on every query (FTS5 keeps no count): for a word in
# most documents that count is most of the cost of a search, and the weight it buys is next to
# nothing (docs/search-and-desk.md, "Search").
RARE = 2000
# A query none of whose words is rare ranks its newest this many matches (more for a large
# --limit). Documents are numbered newest first (index.doc_key), so FTS5 walks to them in its
# own order, scoring none.
NEWEST = 2000


def search(db: sqlite3.Connection, query: str, now: datetime, *, platform: str | None = None,
           limit: int = 10) -> list[Hit]:
    """All words first; if that finds nothing, any word, once. Any-word with a common word
    beside rarer ones first ranks the matches of the rarer words only, since a common word's
    matches would crowd them out; only when those are fewer than `limit` does every word take
    part."""
    tokens = _tokens(query)
    if not tokens:
        return []
    rare = [token for token in tokens if _matches_at_most(db, token, RARE)]
    hits = _run(db, tokens, rare, "AND", now, platform, limit)
    if hits or len(tokens) == 1:
        return hits
    if rare and len(rare) < len(tokens):
        hits = _run(db, rare, rare, "OR", now, platform, limit)
        if len(hits) >= limit:
            return hits
    return _run(db, tokens, rare, "OR", now, platform, limit)


def _matches_at_most(db: sqlite3.Connection, token: str, count: int) -> bool:
    """Whether the word is in at most `count` documents: walks at most that many, scoring none."""
    return db.execute("SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?"
                      " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                      (_joined([token], "AND"), count)).fetchone() is None


def _run(db: sqlite3.Connection, tokens: list[str], rare: list[str], joiner: str,
         now: datetime, platform: str | None, limit: int) -> list[Hit]:
    """Score the candidates, keep the best `limit`, make their snippets. Relevance is BM25 over
    the query's rare words; a candidate holding none of them has relevance 0, and when the
    query has no rare word every candidate has relevance 1 (nothing tells them apart)."""
    expression = _joined(tokens, joiner)
    weighed = [token for token in tokens if token in rare]
    stamp = now.timestamp()
    # (score, at, id, pid, kind, at, relevance, recency, importance) of each candidate
    scored: dict[int, tuple[float, int, int, int, str, int | None, float, float, float]] = {}

    def score(doc_id: int, pid: int, kind: str, at: int | None, important: int,
              relevance: float) -> None:
        recency = _recency(stamp, at)
        total = WEIGHTS[0] * relevance + WEIGHTS[1] * recency + WEIGHTS[2] * important
        scored[doc_id] = (total, at or 0, doc_id, pid, kind, at, relevance, recency,
                          float(important))

    if weighed:
        # The matches of the rare words (at most RARE per word) by their BM25 over them; the
        # best max(200, 20 x limit) are scored (on a platform, all: it filters afterwards).
        holding = None
        if joiner == "AND" and len(weighed) < len(tokens):
            # Only those that hold the common words too.
            holding = {rowid for (rowid,) in db.execute(
                "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?", (expression,))}
        pool = max(200, 20 * limit)
        ranks: dict[int, float] = {}
        # FTS5 cuts the best itself when nothing is filtered afterwards (-1: no limit).
        cut = pool if holding is None and platform is None else -1
        for rowid, rank in db.execute("SELECT rowid, rank FROM docs_fts WHERE docs_fts MATCH ?"
                                      " ORDER BY rank LIMIT ?", (_joined(weighed, joiner), cut)):
            if holding is None or rowid in holding:
                ranks[rowid] = rank
                if platform is None and len(ranks) >= pool:
                    break
        about = _about(db, sorted(ranks), platform)
        best = min((ranks[row[0]] for row in about), default=0.0)
        for doc_id, pid, kind, at, important in about:
            # bm25 is negative: lower is better; the best match of the query is 1.
            score(doc_id, pid, kind, at, important, ranks[doc_id] / best if best < 0 else 1.0)
    if not weighed or (joiner == "OR" and len(weighed) < len(tokens)):
        _newest(db, expression, platform, limit, 0.0 if weighed else 1.0, stamp, scored, score)
    best_first = sorted(scored.values(), key=lambda row: (-row[0], -row[1], -row[2]))[:limit]
    hits = []
    for total, _, doc_id, pid, kind, at, relevance, recency, importance in best_first:
        plat, handle = db.execute("SELECT platform, handle FROM people WHERE pid = ?",
                                  (pid,)).fetchone()
        # The snippet only for what is shown (a rowid lookup each).
        snip = db.execute("SELECT snippet(docs_fts, -1, '[', ']', '…', 12) FROM docs_fts"
                          " WHERE docs_fts MATCH ? AND rowid = ?",
                          (expression, doc_id)).fetchone()
        hits.append(Hit(plat, handle, kind, at, (snip[0] if snip else "") or "",
                        round(relevance, 4), round(recency, 4), importance, round(total, 4)))
    return hits


def _recency(stamp: float, at: int | None) -> float:
    age_days = max(0.0, (stamp - at) / 86400) if at is not None else UNDATED_DAYS
    return float(0.5 ** (age_days / HALF_LIFE_DAYS))


UNDATED_DAYS = 365.0  # the age a document with no time is given


def _newest(db: sqlite3.Connection, expression: str, platform: str | None, limit: int,
            relevance: float, stamp: float, scored: dict[int, Any],
            score: Callable[[int, int, str, int | None, int, float], None]) -> None:
    """Score the matches newest first (FTS5's own order: ids are newest first), and stop
    once no older one can enter the best `limit` (its recency only falls), or after
    max(NEWEST, 20 × limit) of them."""
    sql = ("SELECT f.rowid, d.pid, d.kind, d.at, d.important FROM docs_fts f"
           " JOIN docs d ON d.id = f.rowid")
    args: list[object] = [expression]
    if platform:
        sql += " JOIN people p ON p.pid = d.pid AND p.platform = ?"
        args.insert(0, platform)
    sql += " WHERE docs_fts MATCH ? ORDER BY f.rowid DESC LIMIT ?"
    args.append(max(NEWEST, limit * 20))
    floor = _recency(stamp, None)
    best: list[float] = []  # the best `limit` scores so far, a min-heap
    for doc_id, pid, kind, at, important in db.execute(sql, args):
        ceiling = WEIGHTS[0] * relevance + WEIGHTS[1] * max(_recency(stamp, at), floor) \
            + WEIGHTS[2]
        if len(best) >= limit and best[0] >= ceiling:
            break
        if doc_id not in scored:
            score(doc_id, pid, kind, at, important, relevance)
        total = scored[doc_id][0]
        if len(best) < limit:
            heapq.heappush(best, total)
        elif total > best[0]:
            heapq.heapreplace(best, total)


_ABOUT = "SELECT d.id, d.pid, d.kind, d.at, d.important FROM docs d WHERE "
_ABOUT_ON_PLATFORM = ("SELECT d.id, d.pid, d.kind, d.at, d.important FROM docs d JOIN people p"
                      " ON p.pid = d.pid WHERE p.platform = ? AND ")


def _about(db: sqlite3.Connection, ids: list[int],
           platform: str | None) -> list[tuple[int, int, str, int | None, int]]:
    """(id, pid, kind, at, important) of each document, of the platform if one is given."""
    rows: list[tuple[int, int, str, int | None, int]] = []
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        marks = ",".join("?" * len(part))
        where = f"d.id IN ({marks})"  # placeholders only
        if platform:
            sql = _ABOUT_ON_PLATFORM + where
            rows += db.execute(sql, [platform, *part]).fetchall()
        else:
            sql = _ABOUT + where
            rows += db.execute(sql, part).fetchall()
    return rows
