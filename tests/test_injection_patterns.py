"""The injection guard compiles its patterns when first used, and makes a family's patterns
when a text first opens its gate (docs/memory.md, "Privacy at write time"): a pattern no test
text reaches must still be a valid regex, found here and not by the first message that happens
to need it."""

from __future__ import annotations

import re

from tactful.core.memory import injection


def _regexes() -> list[injection._Regex]:
    found: list[injection._Regex] = []
    for name in dir(injection):
        value = getattr(injection, name)
        if isinstance(value, injection._Regex):
            found.append(value)
        if not (isinstance(value, tuple) and value):
            continue
        if all(isinstance(g, injection._Group) for g in value):
            value = tuple(p for group in value for p in group.patterns())
        if all(isinstance(p, injection._Pattern) for p in value):
            for pattern in value:
                found.append(pattern.regex)
                if pattern.near is not None:
                    found.append(pattern.near)
    return found


def test_every_pattern_of_the_guard_compiles_though_none_is_compiled_before_use() -> None:
    regexes = _regexes()
    assert len(regexes) > 150  # the role markers, the patterns, the families, the squashed
    for regex in regexes:
        assert isinstance(regex.get(), re.Pattern), regex.source[:60]
