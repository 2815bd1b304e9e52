"""The batch replier: fetch what arrived, skip who is not worth it, draft, send, remember.

One run, for one platform (`routines.<name>`: platform, responder, max_per_run, pause):
1. Fetch what arrived since the inbound cursor into the inbox (not in a dry run: a dry run reads
   no credential, and works from what the inbox already holds).
2. For each waiting item, oldest first: the ledger says it was answered (or is pending after a
   crash) → settled, never sent again; the worth-engaging test says no → skipped with its reason
   (someone asking to be left alone is flagged do-not-engage at once, dry run or not);
   otherwise their words are remembered, the card is read, a responder drafts, and the draft
   goes through the guarded pipeline addressed to them.
3. A do-not-engage refusal at the send stops the whole batch with exit 3; so do memory (4),
   credentials (2), rate limits, quotas and platform failures (5). At most `max_per_run`
   replies, with `pause` seconds between them; SIGTERM ends the run between two items.

Resumable after a crash: an item is settled only after its send, and the ledger refuses a
second send of the same reply, so a rerun answers each post once.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tactful.core.errors import BadInput, DoNotEngage, MemoryUnavailable, Refused
from tactful.core.inbound.inbox import ANSWERED, SKIPPED, Inbox
from tactful.core.memory import card, recording
from tactful.core.memory import check as checks
from tactful.core.memory.handles import normalize_platform
from tactful.core.memory.person import Person
from tactful.core.memory.recording import Outcome
from tactful.core.responders.base import DraftFailed, Responder, ResponderSettings
from tactful.core.responders.prompt import compose
from tactful.core.schedule.routine import Result, Run
from tactful.core.send import credentials
from tactful.core.send.adapter import Adapter, Inbound, PlatformDown, RateLimited
from tactful.core.send.adapters import adapter_for, settings_for
from tactful.core.send.guards import QuotaReached
from tactful.core.send.ledger import PENDING, Ledger, send_key
from tactful.core.send.pipeline import Pipeline, SendRequest
from tactful.routines import worth

FETCH_LIMIT = 50
DEFAULT_RESPONDER = "template"


def responder_for(run: Run) -> Responder:
    config = run.context.config
    name = run.config.responder or DEFAULT_RESPONDER
    if name in config.responders:
        settings = config.responders[name]
    elif name == DEFAULT_RESPONDER:
        from tactful.core.config.values import ResponderConfig

        settings = ResponderConfig()
    else:
        raise BadInput(f"routines.{run.name}.responder: no responder {name!r} in the config "
                       f"(configured: {', '.join(sorted(config.responders)) or 'none'})")
    kinds = run.host.collect("register_responders")
    if settings.kind not in kinds:
        raise BadInput(f"responders.{name}.kind: no responder kind {settings.kind!r} is "
                       f"installed (installed: {', '.join(sorted(kinds)) or 'none'})")
    factory = kinds[settings.kind][1]
    made: Responder = factory(ResponderSettings(
        name=name, config=settings,
        api_key=lambda: credentials.get("responder", name, "api_key")))
    return made


def _fetch(run: Run, adapter: Adapter, inbox: Inbox) -> int:
    platform = adapter.platform
    account = settings_for(platform, run.context.config).account
    session = adapter.open(credentials.read(platform, account, adapter.read_fields))
    try:
        # Some platforms read mentions only with the user's own keys (X: user context).
        if adapter.post_fields and getattr(adapter, "fetch_needs_posting", False):
            session.enable_posting(credentials.read(platform, account, adapter.post_fields))
        page = session.fetch_inbound(inbox.cursor(platform), FETCH_LIMIT)
    finally:
        session.close()
    return inbox.add(platform, page.items, page.cursor)


def _remember_inbound(run: Run, item: Inbound) -> None:
    kind = "reply" if item.thread and item.thread != item.post.id else "mention"
    link = item.post.url

    def mutate(person: Person) -> Outcome:
        if item.author.is_bot and person.kind == "person":
            person.kind = "bot"  # the platform says so: a fixed kind, one reply per thread
        if link and any(e.link == link and e.direction == "inbound" for e in person.entries):
            return Outcome(note="already remembered")  # a rerun after a crash
        return recording.remember(person, kind=kind, direction="inbound", at=item.at,
                                  they=item.text, link=link, thread=item.thread,
                                  display_name=item.author.display_name,
                                  person_id=item.author.id)

    run.context.people.change(item.post.platform, item.author.handle, mutate)


def _rules(home: Path) -> str:
    try:
        return (home / "rules.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def batch_reply(run: Run) -> Result:
    context = run.context
    if run.config.platform is None:
        raise BadInput(f"routines.{run.name}.platform: a batch-reply routine needs a platform")
    platform = normalize_platform(run.config.platform)
    context.home.require_people()  # fail closed before anything else
    adapter = adapter_for(platform, context.config, run.host)
    responder = responder_for(run)
    pipeline = Pipeline(config=context.config, home=context.home, people=context.people,
                        settings=context.settings, host=run.host, clock=context.now)
    # The persona's own account (its keyring account is named after it, usually the handle).
    own = {settings_for(platform, context.config).account.lower().removeprefix("@")}
    counts: Counter[str] = Counter()
    inbox = Inbox(context.home.root)
    ledger = Ledger(context.home.root)
    try:
        if not run.dry_run:
            counts["fetched"] = _fetch(run, adapter, inbox)
            run.log.emit("batch.fetched", routine=run.name, platform=platform,
                         new=counts["fetched"])
        for item in inbox.waiting(platform):
            if run.stop.is_set() or counts["answered"] >= run.config.max_per_run:
                break
            stop = _one(run, item, adapter, responder, pipeline, ledger, inbox, own, counts)
            if stop is not None:
                return _result(run, counts, stop)
    finally:
        inbox.close()
        ledger.close()
    return _result(run, counts, None)


def _skip(run: Run, inbox: Inbox, item: Inbound, reason: str, counts: Counter[str]) -> None:
    counts["skipped"] += 1
    run.log.emit("batch.skipped", routine=run.name, platform=item.post.platform,
                 post=item.post.id[:120], handle=item.author.handle, reason=reason)
    if not run.dry_run:
        inbox.settle(item.post.platform, item.post.id, SKIPPED, reason)


def _one(run: Run, item: Inbound, adapter: Adapter, responder: Responder, pipeline: Pipeline,
         ledger: Ledger, inbox: Inbox, own: set[str],
         counts: Counter[str]) -> tuple[int, str] | None:
    """Handle one item; returns (exit code, why) when the whole batch must stop."""
    context, platform, handle = run.context, item.post.platform, item.author.handle
    record = ledger.find_any([send_key(platform, "reply", spelling, None, "")
                              for spelling in (item.post.id, item.post.url) if spelling])
    if record is not None:
        reason = ("a send is pending in the ledger (a crash?): check by hand"
                  if record.state == PENDING else "already answered")
        _skip(run, inbox, item, reason, counts)
        return None
    verdict = checks.check(context.people, platform, handle, item.author.id)
    skip = worth.judge(item, verdict, ledger, context.config.engagement, own)
    if skip is not None:
        if skip.flag_dne:
            context.people.change(platform, handle, lambda p: recording.do_not_engage(
                p, True, worth.LEAVE_ALONE, context.now()))
            counts["flagged"] += 1
        elif skip.reason.startswith("tried to give instructions") and not run.dry_run:
            _remember_inbound(run, item)  # withheld by the gate, and flagged
        _skip(run, inbox, item, skip.reason, counts)
        return None
    if not run.dry_run:
        _remember_inbound(run, item)
        verdict = checks.check(context.people, platform, handle, item.author.id)
    prompt = compose(persona_name=context.config.persona.name, platform=platform,
                     card=card.render_text(verdict, context.settings.tz), message=item.text,
                     rules=_rules(context.home.root), limit=adapter.text_limit)
    try:
        draft = responder.draft(prompt).strip()
    except DraftFailed as exc:
        _skip(run, inbox, item, f"draft failed ({type(exc).__name__})", counts)
        return None
    if not draft:
        _skip(run, inbox, item, "empty draft", counts)
        return None
    try:
        outcome = pipeline.send(SendRequest(platform, draft, to=handle, reply_to=item.post.id,
                                            dry_run=run.dry_run,
                                            thread=item.thread or item.author.thread))
    except DoNotEngage:
        _skip(run, inbox, item, "do-not-engage at the send", counts)
        return 3, "a do-not-engage account was about to be touched; the batch stopped"
    except (RateLimited, QuotaReached, PlatformDown) as exc:
        return exc.exit_code, f"{type(exc).__name__}: the batch stopped; the rest waits"
    except MemoryUnavailable:
        return 4, "memory unavailable; the batch stopped"
    except Refused as exc:
        _skip(run, inbox, item, f"refused: {type(exc).__name__}", counts)
        return None
    except BadInput as exc:
        return 2, f"{exc}"
    counts["answered"] += 1
    if outcome.dry_run:
        run.log.emit("batch.dry_run", routine=run.name, platform=platform,
                     post=item.post.id[:120], handle=handle)
    else:
        url = outcome.sent.url if outcome.sent else None
        run.log.emit("batch.sent", routine=run.name, platform=platform,
                     post=item.post.id[:120], handle=handle, url=(url or "")[:120])
        inbox.settle(platform, item.post.id, ANSWERED)
        if outcome.aftermath.warnings:
            # The warnings may quote the reply: only their existence is logged. The log line
            # of the send was written, so the nightly sync still carries it into memory.
            run.log.emit("batch.memory_warning", routine=run.name, handle=handle,
                         warnings=len(outcome.aftermath.warnings))
    run.pause(run.config.pause)  # a stop meanwhile ends the loop before the next item
    return None


def _result(run: Run, counts: Counter[str], stop: tuple[int, str] | None) -> Result:
    parts = [f"{counts['fetched']} fetched" if not run.dry_run else "dry run (no fetch)",
             f"{counts['answered']} {'would be ' if run.dry_run else ''}answered",
             f"{counts['skipped']} skipped"]
    if counts["flagged"]:
        parts.append(f"{counts['flagged']} flagged do-not-engage")
    summary = ", ".join(parts)
    if stop is not None:
        return Result(f"{summary}; {stop[1]}", exit_code=stop[0], counts=dict(counts))
    return Result(summary, counts=dict(counts))
