"""`check`: may this account be touched? (SPEC §8, §3)

A person is do-not-engage when their own file says so, when another file carrying the same
stable id says so (a renamed account), or when a file they are linked to as the same person
(`aka`) says so. Memory that cannot be read is a refusal, never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from tactful.core.errors import MemoryUnavailable
from tactful.core.memory import identity
from tactful.core.memory.handles import split_ref
from tactful.core.memory.person import Person
from tactful.core.memory.store import People

KNOWN, STRANGER, DNE, UNREADABLE = "known", "stranger", "do-not-engage", "unreadable"
NUMERIC_ID_HANDLES = ("telegram",)  # platforms where a handle of digits is the stable id
EXIT_CODES = {KNOWN: 0, STRANGER: 0, DNE: 3, UNREADABLE: 4}


@dataclass(frozen=True)
class Verdict:
    platform: str
    handle: str
    status: str
    why: str = ""
    person: Person | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def line(self) -> str:
        who = f"{self.platform}/@{self.handle}"
        if self.status == DNE:
            return f"{who}: DO_NOT_ENGAGE — {self.why}"
        if self.status == UNREADABLE:
            return f"{who}: REFUSED — memory unavailable: {self.why}"
        if self.person is None:
            return f"{who}: ok — stranger (no file)"
        rung = self.person.kind if self.person.kind != "person" else self.person.relationship
        return f"{who}: ok — {rung}"


def check(people: People, platform: str, handle: str, person_id: str | None = None) -> Verdict:
    try:
        misnamed = identity.misnamed_file(people.home, platform, handle)
        if misnamed is not None:
            return Verdict(platform, handle, UNREADABLE,
                           f"{people.home.people(platform) / misnamed} stands for @{handle} but "
                           f"is not named {handle}.md; rename it")
        person = people.load(platform, handle)
        if person is not None and person.do_not_engage:
            return Verdict(platform, handle, DNE, person.dne_reason or "do_not_engage is set",
                           person)
        ids = {i for i in (person_id, person.id if person else None) if i is not None}
        if platform in NUMERIC_ID_HANDLES and handle.isdigit():
            ids.add(handle)  # a Telegram user without a username is named by their id
        for stable_id in sorted(ids):
            for other in people.same_id(platform, stable_id, besides=handle):
                if other.do_not_engage:
                    return Verdict(platform, handle, DNE,
                                   f"same account id {stable_id} as @{other.handle}, "
                                   "which is do-not-engage", person)
        flagged = _linked_dne(people, person) if person else None
        if flagged is not None:
            return Verdict(platform, handle, DNE,
                           f"linked as the same person to {flagged}, which is do-not-engage",
                           person)
    except MemoryUnavailable as exc:
        return Verdict(platform, handle, UNREADABLE, str(exc))
    except Exception as exc:  # noqa: BLE001 — fail closed on anything unforeseen
        return Verdict(platform, handle, UNREADABLE, f"{type(exc).__name__}: {exc}")
    return Verdict(platform, handle, KNOWN if person else STRANGER, person=person)


MAX_LINKED = 64  # accounts walked through aka links; a real person has a handful


def _linked_dne(people: People, person: Person) -> str | None:
    """The first do-not-engage account reachable through aka links, however many steps away
    (A is B, B is C: C's flag is A's flag)."""
    seen = {person.ref}
    queue = [link.ref for link in person.aka]
    while queue and len(seen) < MAX_LINKED:
        ref = queue.pop(0)
        if ref in seen:
            continue
        seen.add(ref)
        other_platform, other_handle = split_ref(ref)
        linked = people.load(other_platform, other_handle)
        if linked is None:
            continue
        if linked.do_not_engage:
            return ref
        queue.extend(link.ref for link in linked.aka if link.ref not in seen)
    return None


def overall_exit(verdicts: list[Verdict]) -> int:
    """3 if anyone is do-not-engage (the hard stop wins), else 4 if any memory failed, else 0."""
    codes = {v.exit_code for v in verdicts}
    for code in (3, 4):
        if code in codes:
            return code
    return 0
