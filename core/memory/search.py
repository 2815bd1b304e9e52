"""Search over the index: every token quoted, one score per result (docs/search-and-desk.md).

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
_PARTS = re.compile(r"\w+", re.UNICODE)


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
    tokens = _tokens(query)
    return _joined(tokens, joiner) if tokens else None


def _tokens(query: str) -> list[str]:
    return [t for t in _TOKEN.findall(query) if _WORDY.search(t)]


def _joined(tokens: list[str], joiner: str) -> str:
    return f" {joiner} ".join('"' + t.replace('"', '""') + '"' for t in tokens)


COMMON_SHARE = 0.05  # a word in more of the entries than this tells little about any of them


def search(db: sqlite3.Connection, query: str, now: datetime, *, platform: str | None = None,
           limit: int = 10) -> list[Hit]:
    """All words first; if that finds nothing, any word, once. Any-word with a common word
    beside rarer ones first ranks the matches of the rarer words only: a common word adds next
    to nothing to BM25 (its weight is near zero), but ranking its matches is most of the cost
    of a query. Only when those are fewer than `limit` does every word take part."""
    tokens = _tokens(query)
    if not tokens:
        return []
    hits = _run(db, _joined(tokens, "AND"), now, platform, limit)
    if hits or len(tokens) == 1:
        return hits
    rare = _without_common(db, tokens)
    if rare and len(rare) < len(tokens):
        hits = _run(db, _joined(rare, "OR"), now, platform, limit)
        if len(hits) >= limit:
            return hits
    return _run(db, _joined(tokens, "OR"), now, platform, limit)


def _without_common(db: sqlite3.Connection, tokens: list[str]) -> list[str]:
    """The tokens that are not in more than COMMON_SHARE of the entries, by FTS5's own
    vocabulary (a word the tokenizer splits counts by its rarest part)."""
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.docs_vocab"
               " USING fts5vocab(main, docs_fts, row)")
    total = db.execute("SELECT count(*) FROM docs").fetchone()[0] or 0
    cap = max(1000, int(total * COMMON_SHARE))
    kept = []
    for token in tokens:
        parts = [p.lower() for p in _PARTS.findall(token)]
        counts = [db.execute("SELECT doc FROM temp.docs_vocab WHERE term = ?",
                             (part,)).fetchone() for part in parts]
        if not parts or min((c[0] if c else 0) for c in counts) <= cap:
            kept.append(token)
    return kept


def _run(db: sqlite3.Connection, expression: str, now: datetime, platform: str | None,
         limit: int) -> list[Hit]:
    pool = max(limit * 20, 200)
    # One MATCH: FTS5 ranks and cuts its own matches (ORDER BY rank LIMIT runs inside the
    # module), and the snippet is made in the same pass, only for the rows of that pool. A
    # platform filter must see every match, so it joins first.
    if platform:
        sql = ("SELECT f.rowid, p.platform, p.handle, d.kind, d.at, d.important, f.rank,"
               " snippet(docs_fts, -1, '[', ']', '…', 12) FROM docs_fts f"
               " JOIN docs d ON d.id = f.rowid"
               " JOIN people p ON p.pid = d.pid"
               " WHERE docs_fts MATCH ? AND p.platform = ? ORDER BY f.rank LIMIT ?")
        args: list[object] = [expression, platform, pool]
    else:
        sql = ("SELECT m.id, p.platform, p.handle, d.kind, d.at, d.important, m.rank, m.snip"
               " FROM (SELECT rowid AS id, rank, snippet(docs_fts, -1, '[', ']', '…', 12)"
               "       AS snip FROM docs_fts"
               "       WHERE docs_fts MATCH ? ORDER BY rank LIMIT ?) m"
               " JOIN docs d ON d.id = m.id JOIN people p ON p.pid = d.pid")
        args = [expression, pool]
    rows = db.execute(sql, args).fetchall()
    if not rows:
        return []
    best = min(row[6] for row in rows)  # bm25 is negative: lower is better
    stamp = now.timestamp()
    scored = []
    for doc_id, plat, handle, kind, at, important, rank, snip in rows:
        relevance = rank / best if best < 0 else 1.0
        age_days = max(0.0, (stamp - at) / 86400) if at is not None else 365.0
        recency = 0.5 ** (age_days / HALF_LIFE_DAYS)
        importance = float(important)
        score = WEIGHTS[0] * relevance + WEIGHTS[1] * recency + WEIGHTS[2] * importance
        scored.append((score, at or 0, doc_id, plat, handle, kind, at, relevance, recency,
                       importance, snip))
    scored.sort(key=lambda row: (-row[0], -row[1]))
    return [Hit(plat, handle, kind, at, snip or "", round(relevance, 4), round(recency, 4),
                importance, round(score, 4))
            for score, _, _, plat, handle, kind, at, relevance, recency, importance, snip
            in scored[:limit]]
