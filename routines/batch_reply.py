"""The batch replier: fetch what arrived, skip who is not worth it, draft, send, remember.

One run, for one platform (`routines.<name>`: platform, responder, max_per_run, pause):
1. Fetch what arrived since the inbound cursor into the inbox, with the read credentials (not
   in a dry run: a dry run reads no credential, and works from what the inbox already holds).
2. For each waiting item, oldest first, the send gate screens the reply before anything is
   drafted: answered already (or pending after a crash) → settled, never sent again; the
   author (by handle and stable id) is do-not-engage → skipped and counted, and the batch goes
   on; a bot that had its one reply in the thread → skipped. Then the worth-engaging test
   (someone asking to be left alone is flagged do-not-engage at once), their words into
   memory, the card, a draft, and the draft through the gate addressed to them. A reply the
   gate refuses once the thread is read or the draft is known (it would reach a flagged
   account) is dropped and counted.
3. Memory (4), credentials (2), rate limits, quotas and platform failures (5) stop the batch;
   a do-not-engage account never does: it is skipped (exit 0; the summary says how many and
   why). At most `max_per_run` replies, `pause` seconds apart; SIGTERM ends the run between
   two items. With `--preview` everything is read, resolved, guarded and drafted, and the
   would-be replies go to the outbox; nothing is settled, no posting key is read.

Resumable after a crash: an item is settled only after its send, and the ledger refuses a
second send of the same reply, so a rerun answers each post once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from tactful.core.app import App
from tactful.core.errors import (
    BadInput,
    ConfigError,
    DoNotEngage,
    MemoryUnavailable,
    MissingCredential,
    Refused,
    TactfulError,
)
from tactful.core.inbound.inbox import ANSWERED, SKIPPED, Inbox
from tactful.core.memory import card, recording, tombstones
from tactful.core.memory.check import Verdict
from tactful.core.memory.handles import normalize_handle, normalize_platform
from tactful.core.memory.person import Person
from tactful.core.memory.recording import Outcome
from tactful.core.responders import choose
from tactful.core.responders.base import DraftFailed, Responder
from tactful.core.responders.prompt import compose
from tactful.core.schedule.routine import Result, Run
from tactful.core.send import credentials
from tactful.core.send.adapter import (
    Adapter,
    Inbound,
    Party,
    PlatformDown,
    RateLimited,
    Unauthorized,
)
from tactful.core.send.adapters import settings_for
from tactful.core.send.gate import Gate
from tactful.core.send.guards import QuotaReached
from tactful.core.send.pipeline import Pipeline, SendRequest
from tactful.routines import worth

FETCH_LIMIT = 50
DRAFT_TRIES = 3  # failed drafts of one item before it is skipped for good
PLACEHOLDER = "…"  # the screen before drafting: no text yet, every other check the same


def responder_for(run: Run) -> Responder:
    return choose.responder_for(run.config.responder, run.context.config, run.host,
                                where=f"routines.{run.name}.responder",
                                read_key=not run.dry_run)


def _fetch(run: Run, adapter: Adapter, inbox: Inbox) -> int:
    platform = adapter.platform
    account = settings_for(platform, run.context.config).account
    session = adapter.open(credentials.read(platform, account, adapter.read_fields))
    try:
        # Some platforms read mentions only with the user's own keys (X: user context).
        if _fetch_needs_posting(adapter):
            session.enable_posting(credentials.read(platform, account, adapter.post_fields))
        page = session.fetch_inbound(inbox.cursor(platform), FETCH_LIMIT)
    finally:
        session.close()
    # A forgotten person's old posts fetched again (the cursor no longer names them) stay
    # forgotten; what they write after their tombstone is new contact (docs/memory.md).
    stones = tombstones.load(run.context.home)
    items = [i for i in page.items if not tombstones.buried(
        stones, platform, normalize_handle(i.author.handle, platform), i.at, i.author.id)]
    return inbox.add(platform, [_normalized(i, platform) for i in items], page.cursor)


def _normalized(item: Inbound, platform: str) -> Inbound:
    """Handles from an adapter are normalized here too: a plugin that forgets to must not
    make `Mallory` miss the file of `mallory`."""
    author = replace(item.author, handle=normalize_handle(item.author.handle, platform))
    mentions = tuple(normalize_handle(m, platform) for m in item.mentions)
    return replace(item, author=author, mentions=mentions)


def _remember_inbound(run: Run, item: Inbound, inbox: Inbox) -> bool:
    """Their words into memory, once per post (a rerun after a crash adds nothing). True when
    something of theirs was withheld as instructions."""
    kind = "reply" if item.thread and item.thread != item.post.id else "mention"
    link = item.post.url
    if inbox.remembered(item.post.platform, item.post.id):
        return False

    # Judged on the text as it arrived, before the inbox scrubbed it.
    instructs = inbox.instructs(item.post.platform, item.post.id)

    def mutate(person: Person) -> Outcome:
        if item.author.is_bot and person.kind == "person":
            person.kind = "bot"  # the platform says so: a fixed kind, one reply per thread
        if link and any(e.link == link and e.direction == "inbound" for e in person.entries):
            return Outcome(note="already remembered")  # a rerun after a crash
        done = recording.remember(person, kind=kind, direction="inbound", at=item.at,
                                  they=None if instructs else item.text, link=link,
                                  thread=item.thread, display_name=item.author.display_name,
                                  person_id=item.author.id)
        if instructs is None or done.withheld is not None:
            return done
        person.entries[-1].withheld = f"{recording.INJECTION_FLAG} ({instructs}); " \
            "content not stored"
        recording.flag(person, recording.INJECTION_FLAG, instructs, item.at)
        return Outcome(redacted=done.redacted, withheld=instructs)

    person, outcome = run.context.people.change(item.post.platform, item.author.handle, mutate)
    inbox.mark_remembered(item.post.platform, item.post.id)
    return outcome.withheld is not None or person.flag(recording.INJECTION_FLAG) is not None


def _rules(home: Path) -> str:
    try:
        return (home / "rules.md").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def batch_reply(run: Run) -> Result:
    context = run.context
    if run.config.platform is None:
        raise BadInput(f"routines.{run.name}.platform: a batch-reply routine needs a platform")
    if run.config.responder is None:
        raise BadInput(f"routines.{run.name}.responder: name the responder that drafts the "
                       "replies (`template` is the offline one, for trying things out)")
    platform = normalize_platform(run.config.platform)
    context.home.require_people()  # fail closed before anything else
    gate = context.make_gate()
    counts: Counter[str] = Counter()
    try:
        adapter = gate.adapter(platform)
        only = {normalize_handle(h, platform) for h in run.only}
        named = _named_by_hand(gate, platform, only)
        if named is not None:
            return Result(named.line(), exit_code=named.exit_code)
        responder = responder_for(run)
        # The persona's own account (its keyring account is named after it, usually the
        # handle).
        own = {settings_for(platform, context.config).account.lower().removeprefix("@")}
        inbox = Inbox(context.home.root)
        try:
            if not _looking(run):
                for line in gate.repair():
                    run.log.emit("batch.repaired", routine=run.name, detail=line[:200])
            if not run.dry_run and not (run.preview and _fetch_needs_posting(adapter)):
                counts["fetched"] = _fetch(run, adapter, inbox)
                run.log.emit("batch.fetched", routine=run.name, platform=platform,
                             new=counts["fetched"])
            pipeline = Pipeline(gate)
            for item in inbox.waiting(platform):
                if run.stop.is_set() or counts["answered"] >= run.config.max_per_run:
                    break
                if only and item.author.handle not in only:
                    continue  # waits for a run that is not limited to others
                stop = _one(run, item, adapter, responder, pipeline, inbox, own, counts)
                if stop is not None:
                    return _result(run, counts, stop)
        finally:
            inbox.close()
    finally:
        gate.close()
    return _result(run, counts, None)


def _named_by_hand(gate: Gate, platform: str, only: set[str]) -> Verdict | None:
    """An account the operator named by hand that is do-not-engage (exit 3) or unreadable
    (exit 4): the hard stop, before a single key is read."""
    for handle in sorted(only):
        verdict = gate.may_reach(platform, handle)
        if verdict.exit_code:
            return verdict
    return None


def _fetch_needs_posting(adapter: Adapter) -> bool:
    return bool(adapter.post_fields) and bool(getattr(adapter, "fetch_needs_posting", False))


def _looking(run: Run) -> bool:
    """A dry run or a preview: nothing is settled, every item stays for the real run."""
    return run.dry_run or run.preview


def _skip(run: Run, inbox: Inbox, item: Inbound, reason: str, counts: Counter[str]) -> None:
    counts["skipped"] += 1
    counts[f"skipped: {reason}"] += 1
    run.log.emit("batch.skipped", routine=run.name, platform=item.post.platform,
                 post=item.post.id[:120], handle=item.author.handle, reason=reason)
    if not _looking(run):
        inbox.settle(item.post.platform, item.post.id, SKIPPED, reason)


def _request(run: Run, item: Inbound, text: str) -> SendRequest:
    """The reply to one item, as the gate sees it: the author by handle and by the stable id
    the fetch gave, the post by its id and URL."""
    return SendRequest(
        item.post.platform, text, to=item.author.handle, reply_to=item.post.id,
        dry_run=run.dry_run, preview=run.preview, thread=item.thread or item.author.thread,
        aliases=(item.post.url,) if item.post.url else (),
        parties=(Party("author", item.author.handle, item.author.id),))


def _screen(gate: Gate, request: SendRequest) -> TactfulError | None:
    """The gate's offline guards on the reply to come, before a draft is paid for."""
    try:
        gate.offline(gate.prepare(request))
    except (DoNotEngage, Refused, MemoryUnavailable) as exc:
        return exc
    return None


def _reason(refusal: TactfulError) -> str:
    """A label for the log and the summary: never a handle or a text."""
    if isinstance(refusal, DoNotEngage):
        return "do-not-engage"
    text = str(refusal)
    if text.startswith("already replied"):
        return "already answered"
    if text.startswith("already pending"):
        return "a send is pending in the ledger (a crash?): check by hand"
    if "is a bot" in text:
        return "bot already answered in this thread"
    return f"refused: {type(refusal).__name__}"


def _one(run: Run, item: Inbound, adapter: Adapter, responder: Responder, pipeline: Pipeline,
         inbox: Inbox, own: set[str], counts: Counter[str]) -> tuple[int, str] | None:
    """Handle one item; returns (exit code, why) when the whole batch must stop."""
    context, platform, handle = run.context, item.post.platform, item.author.handle
    gate = pipeline.gate
    refusal = _screen(gate, _request(run, item, PLACEHOLDER))
    if isinstance(refusal, QuotaReached | MemoryUnavailable):
        return refusal.exit_code, f"{type(refusal).__name__}: the batch stopped; the rest waits"
    if refusal is not None:
        _skip(run, inbox, item, _reason(refusal), counts)
        return None
    verdict = gate.may_reach(platform, handle, item.author.id)
    skip = worth.judge(item, verdict, context.config.engagement, own)
    if skip is None and inbox.instructs(platform, item.post.id) is not None:
        skip = worth.Skip("tried to give instructions")  # before the scrubber hid a payload
    if skip is not None:
        if skip.flag_dne:
            # With their stable id, so the flag holds after a rename too.
            context.people.change(platform, handle, lambda p: _leave_alone(p, item, context))
            counts["flagged"] += 1
        elif skip.reason.startswith("tried to give instructions") and not _looking(run):
            _remember_inbound(run, item, inbox)  # withheld by the gate, and flagged
        _skip(run, inbox, item, skip.reason, counts)
        return None
    if not _looking(run):
        if _remember_inbound(run, item, inbox):
            # Something of theirs (a display name, say) read as instructions: flagged now.
            _skip(run, inbox, item, "tried to give instructions", counts)
            return None
        verdict = gate.may_reach(platform, handle, item.author.id)
    prompt = compose(persona_name=context.config.persona.name, platform=platform,
                     card=card.render_text(verdict, context.settings.tz), message=item.text,
                     rules=_rules(context.home.root), limit=adapter.text_limit)
    try:
        draft = responder.draft(prompt).strip()
    except DraftFailed as exc:
        # The responder may be down: the item waits for the next run, a few times at most.
        tries = 0 if _looking(run) else inbox.failed_draft(platform, item.post.id)
        if tries >= DRAFT_TRIES:
            _skip(run, inbox, item, f"no draft after {tries} tries", counts)
            return None
        return exc.exit_code, "the responder gave no draft; the batch stopped, the rest waits"
    problem = _draft_problem(draft, adapter, handle)
    if problem is not None:
        _skip(run, inbox, item, problem, counts)
        return None
    try:
        outcome = pipeline.send(_request(run, item, draft))
    except DoNotEngage:
        # The read found someone flagged in the thread, or the draft names them: dropped.
        _skip(run, inbox, item, "do-not-engage", counts)
        return None
    except (RateLimited, QuotaReached, PlatformDown) as exc:
        return exc.exit_code, f"{type(exc).__name__}: the batch stopped; the rest waits"
    except MemoryUnavailable:
        return 4, "memory unavailable; the batch stopped"
    except Refused as exc:
        _skip(run, inbox, item, _reason(exc), counts)
        return None
    except (MissingCredential, Unauthorized, ConfigError) as exc:
        return 2, f"{exc}"
    except BadInput as exc:
        # Something about this one draft or post: skip it, never block the batch for good.
        _skip(run, inbox, item, f"refused: {type(exc).__name__}", counts)
        return None
    counts["answered"] += 1
    if outcome.dry_run:
        run.log.emit("batch.preview" if outcome.preview else "batch.dry_run",
                     routine=run.name, platform=platform, post=item.post.id[:120],
                     handle=handle)
        if not _looking(run):
            # The platform is set to dry_run in the config while the routine runs for real:
            # the item is done (its would-be reply is in the outbox), not written out again
            # on every run.
            inbox.settle(platform, item.post.id, ANSWERED, "dry run (platform)")
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


def _draft_problem(draft: str, adapter: Adapter, author: str) -> str | None:
    if not draft:
        return "empty draft"
    if adapter.text_length(draft) > adapter.text_limit:
        return "draft too long"
    # Only the prompt forbids naming others; this makes it so (a steered model cannot
    # drag a third person into the thread).
    if any(handle != author for handle in adapter.mentions(draft)):
        return "draft mentions someone else"
    return None


def _leave_alone(person: Person, item: Inbound, context: App) -> Outcome:
    if item.author.id is not None and person.id is None:
        person.id = item.author.id
    return recording.do_not_engage(person, True, worth.LEAVE_ALONE, context.now())


def _result(run: Run, counts: Counter[str], stop: tuple[int, str] | None) -> Result:
    doing = "would be " if _looking(run) else ""
    parts = [f"{counts['fetched']} fetched" if not run.dry_run else "dry run (no fetch)",
             f"{counts['answered']} {doing}answered", f"{counts['skipped']} skipped"]
    reasons = sorted((k.removeprefix("skipped: "), n) for k, n in counts.items()
                     if k.startswith("skipped: "))
    if reasons:
        parts[-1] += " (" + ", ".join(f"{n} {why}" for why, n in reasons) + ")"
    if counts["flagged"]:
        parts.append(f"{counts['flagged']} flagged do-not-engage")
    if run.preview:
        parts.insert(0, "preview")
    summary = ", ".join(parts)
    plain = {k: v for k, v in counts.items() if not k.startswith("skipped: ")}
    if stop is not None:
        return Result(f"{summary}; {stop[1]}", exit_code=stop[0], counts=plain)
    return Result(summary, counts=plain)
