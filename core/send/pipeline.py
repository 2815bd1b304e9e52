"""Sending through an adapter: the gate's steps in order, with the keyring read in two halves.

1. the input (exit 2)                        5. dry run: the outbox, and stop
2. memory loads (exit 4)                     6. credentials for reading, from the keyring
3. every party checked: do-not-engage → 3,   7. every party resolved with reads (the author,
   a bot's thread → 5                           the thread, quoted posts, handles to ids) and
4. the ledger, quotas, plugin guards (→ 5)      checked again; a preview stops here
                                             8. posting credentials; ledger pending → send →
                                                ledger sent
                                             9. memory: log line, person entry, desk

Nothing reaches the keyring before steps 1–5 pass, and the posting credentials are read only
after every party was resolved and checked. `tactful send`, the batch replier, the demo and
plugins all send through `Pipeline.send`; the companion asks the same gate (`Gate.admit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tactful.core.errors import TactfulError
from tactful.core.send import credentials
from tactful.core.send.adapter import PlatformDown, Sent, Session
from tactful.core.send.adapters import settings_for
from tactful.core.send.aftermath import Aftermath
from tactful.core.send.attempt import Attempt, SendRequest
from tactful.core.send.gate import Gate, Ticket


@dataclass
class Outcome:
    """What happened to one request that was not refused."""

    attempt: Attempt
    dry_run: bool
    preview: bool = False
    sent: Sent | None = None
    aftermath: Aftermath = field(default_factory=Aftermath)

    def summary(self) -> str:
        a = self.attempt
        who = f" to {a.platform}/@{a.recipient}" if a.recipient else f" on {a.platform}"
        if self.preview:
            return (f"preview: every party resolved and every guard passed; would send "
                    f"{a.action}{who} ({len(a.text)} characters): {a.text}")
        if self.dry_run:
            unseen = ("; not checked offline: " + "; ".join(a.unchecked)) if a.unchecked \
                else ""
            return (f"dry run: would send {a.action}{who} ({len(a.text)} characters): "
                    f"{a.text}{unseen}")
        where = f": {self.sent.url}" if self.sent and self.sent.url else ""
        return f"sent {a.action}{who}{where}"


@dataclass
class Pipeline:
    gate: Gate

    def send(self, request: SendRequest) -> Outcome:
        gate = self.gate
        attempt = gate.prepare(request)
        gate.offline(attempt)
        section = gate.config.platform(attempt.platform)
        if request.dry_run or section.dry_run:
            gate.dry_run(attempt)
            return Outcome(attempt, dry_run=True)
        adapter = attempt.adapter
        account = settings_for(attempt.platform, gate.config).account
        session = adapter.open(credentials.read(attempt.platform, account, adapter.read_fields))
        closed = False
        try:
            gate.resolve(attempt, session)
            if request.preview:
                gate.dry_run(attempt, preview=True)
                return Outcome(attempt, dry_run=True, preview=True)
            gate.ready(attempt)
            if adapter.post_fields:
                session.enable_posting(
                    credentials.read(attempt.platform, account, adapter.post_fields))
            ticket = gate.claim(attempt)
            sent = _deliver(session, ticket)
            # The post is out: the ledger and memory say so before anything else can fail.
            aftermath = ticket.settle(sent)
            closed = True
            _close(session, aftermath)
        finally:
            if not closed:
                session.close()
        return Outcome(attempt, dry_run=False, sent=sent, aftermath=aftermath)


def _close(session: Session, aftermath: Aftermath) -> None:
    try:
        session.close()
    except Exception as exc:  # noqa: BLE001 — the post is out and recorded; only say so
        aftermath.warnings.append(f"the {type(session).__name__} did not close cleanly "
                                  f"({type(exc).__name__})")


def _deliver(session: Session, ticket: Ticket) -> Sent:
    attempt = ticket.attempt
    mention_ids = {m: _known_id(attempt, m) for m in attempt.mentions}
    # Only an adapter that `takes_images` is ever given one (the gate refused it otherwise).
    image = {"image": attempt.request.image} if attempt.request.image is not None else {}
    try:
        return session.send(attempt.text, reply_to=attempt.post, to=attempt.to,
                            mentions=mention_ids, **image)
    except PlatformDown as exc:
        ticket.release(maybe_sent=exc.maybe_sent)
        if not exc.maybe_sent:
            raise
        raise PlatformDown(exc.platform, f"{exc}; it may have gone out — the ledger keeps it "
                           "pending: check the platform, then pass --again to send anyway",
                           maybe_sent=True) from exc
    except TactfulError:
        ticket.release(maybe_sent=False)  # refused before the platform took it
        raise
    except Exception as exc:
        # An adapter bug: whether the post went out is unknown, so the record stays pending.
        ticket.release(maybe_sent=True)
        raise TactfulError(f"the {attempt.platform} adapter failed while sending "
                           f"({type(exc).__name__}: {exc}); the ledger keeps the send pending: "
                           "check the platform, then pass --again to send anyway") from exc


def _known_id(attempt: Attempt, handle: str) -> str | None:
    if handle in attempt.resolved and attempt.resolved[handle] is not None:
        return attempt.resolved[handle]
    verdict = attempt.verdicts.get(handle)
    return verdict.person.id if verdict is not None and verdict.person is not None else None


__all__ = ["Gate", "Outcome", "Pipeline", "SendRequest"]
