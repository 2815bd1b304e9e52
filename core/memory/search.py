"""Search over the index: every token quoted, one score per result (SPEC §7).

score = 3 × relevance + 1 × recency + 0.5 × importance, where relevance is BM25 normalized to
0..1 within the query, recency halves every 14 days, and importance is 1 for an entry with an
open item, a withheld (flagged) message or a reply of mine.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

HALF_LIFE_DAYS = 14.0
WEIGHTS = (3.0, 1.0, 0.5)
_TOKEN = re.compile(r"\S+")
_WORDY = re.compile(r"\w", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    platform: str
    handle: str
    kind: str
    at: int | None
    snippet: str
    relevance: float
    recency: float
    importance: float
    score: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def match_expression(query: str, joiner: str) -> str | None:
    """Quote every token so no user text is ever FTS5 syntax; None when nothing is searchable."""
    tokens = [t for t in _TOKEN.findall(query) if _WORDY.search(t)]
    if not tokens:
        return None
    return f" {joiner} ".join('"' + t.replace('"', '""') + '"' for t in tokens)


def search(db: sqlite3.Connection, query: str, now: datetime, *, platform: str | None = None,
           limit: int = 10) -> list[Hit]:
    for joiner in ("AND", "OR"):  # all words first; if that finds nothing, any word, once
        expression = match_expression(query, joiner)
        if expression is None:
            return []
        hits = _run(db, expression, now, platform, limit)
        if hits:
            return hits
    return []


def _run(db: sqlite3.Connection, expression: str, now: datetime, platform: str | None,
         limit: int) -> list[Hit]:
    pool = max(limit * 20, 200)
    # FTS5 ranks and cuts its own matches first (ORDER BY rank LIMIT runs inside the module);
    # only that pool is joined. A platform filter must see every match, so it joins first.
    # Snippets are the dear part: they are made only for the hits that are shown.
    if platform:
        sql = ("SELECT f.rowid, p.platform, p.handle, d.kind, d.at, d.important, f.rank"
               " FROM docs_fts f JOIN docs d ON d.id = f.rowid JOIN people p ON p.pid = d.pid"
               " WHERE docs_fts MATCH ? AND p.platform = ? ORDER BY f.rank LIMIT ?")
        args: list[object] = [expression, platform, pool]
    else:
        sql = ("SELECT m.id, p.platform, p.handle, d.kind, d.at, d.important, m.rank"
               " FROM (SELECT rowid AS id, rank FROM docs_fts WHERE docs_fts MATCH ?"
               "       ORDER BY rank LIMIT ?) m"
               " JOIN docs d ON d.id = m.id JOIN people p ON p.pid = d.pid")
        args = [expression, pool]
    rows = db.execute(sql, args).fetchall()
    if not rows:
        return []
    best = min(row[6] for row in rows)  # bm25 is negative: lower is better
    scored = []
    for doc_id, plat, handle, kind, at, important, rank in rows:
        relevance = rank / best if best < 0 else 1.0
        age_days = max(0.0, (now.timestamp() - at) / 86400) if at is not None else 365.0
        recency = 0.5 ** (age_days / HALF_LIFE_DAYS)
        importance = float(important)
        score = WEIGHTS[0] * relevance + WEIGHTS[1] * recency + WEIGHTS[2] * importance
        scored.append((score, at or 0, doc_id, plat, handle, kind, at, relevance, recency,
                       importance))
    scored.sort(key=lambda row: (-row[0], -row[1]))
    shown = scored[:limit]
    marks = ",".join("?" * len(shown))
    snippets = dict(db.execute(
        f"SELECT rowid, snippet(docs_fts, -1, '[', ']', '…', 12) FROM docs_fts"  # noqa: S608
        f" WHERE docs_fts MATCH ? AND rowid IN ({marks})",
        [expression, *(row[2] for row in shown)]).fetchall())
    return [Hit(plat, handle, kind, at, snippets.get(doc_id, ""), round(relevance, 4),
                round(recency, 4), importance, round(score, 4))
            for score, _, doc_id, plat, handle, kind, at, relevance, recency, importance in shown]
