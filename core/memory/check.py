"""`check`: may this account be touched? (docs/memory.md)

One model of who a person is: on a platform, a stable id with every handle it has been seen
under; across platforms, the accounts linked to it by `aka`, a link recorded on either side
counting. A person is do-not-engage when any of those files says so: their own, another file
carrying the same stable id (a renamed account), the file named by a numeric id on a platform
where handles may be ids (a Telegram user flagged before they chose a username), or a linked
account however many links away. An account can be checked by handle, by id, or both. Memory
that cannot be read is a refusal, never a pass.
"""

from __future__ import annotations

from tactful.core.errors import MemoryUnavailable
from tactful.core.memory import identity
from tactful.core.memory.handles import canonical_ref, normalize_id, numeric_ids
from tactful.core.memory.person import Person
from tactful.core.memory.store import People, file_id

KNOWN, STRANGER, DNE, UNREADABLE = "known", "stranger", "do-not-engage", "unreadable"
EXIT_CODES = {KNOWN: 0, STRANGER: 0, DNE: 3, UNREADABLE: 4}


class Verdict:
    """The answer about one account. Immutable, equal field by field. A plain class, not a
    dataclass: `check` starts before every reply, and generating a frozen dataclass's methods
    at import cost it more than all of what this class does."""

    __slots__ = ("handle", "person", "platform", "status", "why")
    platform: str
    handle: str
    status: str
    why: str
    person: Person | None

    def __init__(self, platform: str, handle: str, status: str, why: str = "",
                 person: Person | None = None) -> None:
        for name, value in (("platform", platform), ("handle", handle), ("status", status),
                            ("why", why), ("person", person)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Verdict is read-only (cannot set {name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Verdict is read-only (cannot delete {name})")

    def _fields(self) -> tuple[object, ...]:
        return (self.platform, self.handle, self.status, self.why, self.person)

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__ and other._fields() == self._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[type[Verdict], tuple[object, ...]]:  # copy and pickle
        return (Verdict, self._fields())

    def __repr__(self) -> str:
        return (f"Verdict(platform={self.platform!r}, handle={self.handle!r}, "
                f"status={self.status!r}, why={self.why!r}, person={self.person!r})")

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


def check(people: People, platform: str, handle: str | None,
          person_id: str | None = None) -> Verdict:
    """May this account be touched? By handle, by stable id, or both (a party a platform
    named only by id, such as a thread's root author on Bluesky)."""
    shown = handle if handle is not None else f"id:{person_id}"
    try:
        if person_id is not None:
            # One spelling, whoever gave it (a plugin's read may say "0666" for 666); an id
            # that is no id at all is unreadable, never nobody.
            person_id = normalize_id(person_id)
        person = None
        folder = identity.misnamed_folder(people.home, platform)
        if folder is not None:
            return Verdict(platform, shown, UNREADABLE,
                           f"{people.home.root / 'people' / folder} stands for {platform} but "
                           f"is not named {platform}; move its files into people/{platform}")
        if handle is not None:
            misnamed = identity.misnamed_file(people.home, platform, handle)
            if misnamed is not None:
                return Verdict(platform, shown, UNREADABLE,
                               f"{people.home.people(platform) / misnamed} stands for "
                               f"@{handle} but is not named {handle}.md; rename it")
            person = people.load(platform, handle)
        flagged = _flagged_identity(people, platform, handle, person, person_id)
        if flagged is not None:
            return Verdict(platform, shown, DNE, flagged, person)
    except MemoryUnavailable as exc:
        return Verdict(platform, shown, UNREADABLE, str(exc))
    except Exception as exc:  # noqa: BLE001 — fail closed on anything unforeseen
        return Verdict(platform, shown, UNREADABLE, f"{type(exc).__name__}: {exc}")
    return Verdict(platform, shown, KNOWN if person else STRANGER, person=person)


MAX_LINKED = 64  # accounts walked through ids and aka links; a real person has a handful


def _flagged_identity(people: People, platform: str, handle: str | None,
                      person: Person | None, person_id: str | None) -> str | None:
    """Why this account is do-not-engage, or None. One person is every file that carries the
    same stable id (every handle it was seen under; on a platform whose handles may be the
    numeric id, the file named by the id too) and every file linked to any of those by `aka`,
    a link recorded on either side counting, however many steps away."""
    seen: set[str] = {f"{platform}/{handle}"} if handle is not None else set()
    # (platform, handle, the person's file, ids known besides the file's, how it was reached)
    queue: list[tuple[str, str | None, Person | None, set[str], str]] = [
        (platform, handle, person, {person_id} if person_id else set(), "")]
    while queue:
        if len(seen) > MAX_LINKED:
            # Fail closed: a person is a handful of accounts; this many is an error to look at.
            raise MemoryUnavailable(f"{platform}/@{handle or person_id} is linked to more than "
                                    f"{MAX_LINKED} accounts through ids and aka links; check "
                                    "the links in their files")
        at_platform, at_handle, at_person, ids, how = queue.pop(0)
        if at_person is not None and at_person.do_not_engage:
            return f"{how}, which is do-not-engage" if how else \
                at_person.dne_reason or "do_not_engage is set"
        ids |= _ids(at_platform, at_handle, at_person)
        reached: list[tuple[Person, str]] = []
        for stable_id in sorted(ids):
            reached += [(other, f"same account id {stable_id} as @{other.handle}") for other
                        in people.same_id(at_platform, stable_id, besides=at_handle or "")]
            if stable_id.isdigit() and stable_id != at_handle and numeric_ids(at_platform):
                other = people.load(at_platform, stable_id)
                if other is not None:
                    reached.append((other, f"the same account as {at_platform}/{stable_id}"))
        if at_handle is not None:
            reached += [(other, f"linked as the same person from {other.ref}")
                        for other in _linking_to(people, f"{at_platform}/{at_handle}")]
        for link in at_person.aka if at_person is not None else []:
            named = canonical_ref(link.ref)
            if named is None:
                continue  # names no file tactful could have written
            linked_platform, linked_handle = named
            other = people.load(linked_platform, linked_handle)
            if other is not None:
                reached.append((other, f"linked as the same person to {link.ref}"))
        for other, why in reached:
            if other.do_not_engage:
                return f"{why}, which is do-not-engage"
            if other.ref not in seen:
                seen.add(other.ref)
                queue.append((other.platform, other.handle, other, set(), why))
    return None


def _ids(platform: str, handle: str | None, person: Person | None) -> set[str]:
    found = file_id(person) if person is not None else None
    ids = {found} if found is not None else set()
    if handle is not None and handle.isdigit() and numeric_ids(platform):
        ids.add(handle)  # a Telegram user without a username is named by their id
    return ids


def _linking_to(people: People, ref: str) -> list[Person]:
    """Files that name `ref` in their own aka links (the reverse side of a link)."""
    found = []
    wanted = canonical_ref(ref)
    for platform, handle in identity.linked_from(people.home, ref):
        other = people.load(platform, handle)
        if other is not None and any(canonical_ref(link.ref) == wanted for link in other.aka):
            found.append(other)
    return found


def overall_exit(verdicts: list[Verdict]) -> int:
    """3 if anyone is do-not-engage (the hard stop wins), else 4 if any memory failed, else 0."""
    codes = {v.exit_code for v in verdicts}
    for code in (3, 4):
        if code in codes:
            return code
    return 0
