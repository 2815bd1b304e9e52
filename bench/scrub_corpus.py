"""Recall and false positives of the scrubber on the project's corpora, by family.

Recall: for each kind, the share of lines in tests/corpus/secrets/<kind>.txt and of the lines
of tests/corpus/secrets.txt tagged with that kind whose secrets are all gone and whose marker
is there; and the same on tests/corpus/heldout_secrets.txt, written after the rules and not
tuned against. False positives: for each kind, the share of look-alike lines
(tests/corpus/benign_lookalikes.txt) and of ordinary prose (tests/corpus/prose.txt) that the
scrubber changed and reported that kind for. The tests hold the goals (tests/test_scrub.py,
tests/test_scrub_families.py); this prints the figures for the README.

With --cost, what the scrubber costs, this tree beside an earlier commit (--before, by default
the one before the scrubber stopped compiling at import), side by side in one run:

1. Starts, in paired rounds (each round runs every command once, in turns, the order reversed
   every other round; medians; ratios to `python3 -c pass`), as wall time and as the CPU time
   of the process (which a queue for a core does not inflate): importing the scrubber;
   importing it and scrubbing one ordinary message, and one with a date, a time and a link; the
   whole `tactful remember x new_N --kind reply --they "..."`, a new person each time, in a home
   of its own per tree; and the scrubber's own import time as `python3 -X importtime` reports
   it (cumulative: with checksums and the word list).
2. Per text, CPU time in fresh processes, one per tree and round, in turns (the order reversed
   every other round; medians of the rounds and their ratio): every corpus line above once, cold
   (the first texts pay for compiling what they reach), then warm (best of three passes in the
   process); and the same on persona traffic, the distinct texts `tactful sync-log` screens in
   its bench (bench/sync_log.py's generator, fields "text" and "they", collapsed to one line as
   `recording.screen` does before it scrubs).

With --persona, only the per-text figures (part 2), e.g. beside the commit before a change:
`--persona --before HEAD~1`.

The earlier tree is taken with `git archive` into a temporary folder and put first on
PYTHONPATH, this tree linked from another (so both are imported alike); every process runs
with bytecode written and read, as on any install (a shell with PYTHONDONTWRITEBYTECODE would
otherwise time compiling).

Run: .venv/bin/python bench/scrub_corpus.py [--misses] [--cost [--before REV] [--rounds 11]]
     .venv/bin/python bench/scrub_corpus.py --persona [--before REV] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from earlier_trees import (
    Command,
    child_env,
    earlier_tree,
    paired_rounds,
    print_ratios,
    print_starts,
    run,
)

from tactful.core.memory.scrub import KINDS, scrub

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
# main before the scrubber stopped compiling at import.
BEFORE = "abf6f2b"
ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
MARKER = re.compile(r"\[redacted:([a-z]+)\]")


def lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [
        ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), line)
        for line in text.split("\n")
        if line.strip() and not line.startswith("#")
    ]


def secret_cases(paths: list[Path]) -> list[tuple[tuple[str, ...], str, list[str]]]:
    cases = []
    for path in paths:
        for line in lines(path):
            kinds, text, *secrets = (part.strip() for part in line.split(" || "))
            cases.append((tuple(kinds.split(",")), text, secrets))
    return cases


MESSAGE = "thanks, will do! the ferry leaves at nine, see you at the harbour"
NUMBERS = "see you on 2026-12-05 at 14:30 by gate 12, photos at https://x.com/a/status/18610034"
IMPORT_SCRUB = "import tactful.core.memory.scrub"
TACTFUL = "import sys; from tactful.core.cli.main import entry; entry()"


def scrub_one(text: str) -> str:
    return f"from tactful.core.memory.scrub import scrub; scrub({text!r})"


def inside(text: str) -> str:
    """The CPU time of the import and of the first scrub, taken inside the process (the
    interpreter's own start, which dominates the noise of a whole process, left out)."""
    return (
        "import time, binascii, collections, dataclasses, math, re, unicodedata; "
        "t0 = time.process_time(); "
        "from tactful.core.memory.scrub import scrub; t1 = time.process_time(); "
        f"scrub({text!r}); t2 = time.process_time(); "
        "print(t1 - t0, t2 - t1)"
    )


def starts(trees: dict[str, Path | None], homes: dict[str, Path], rounds: int) -> None:
    py = sys.executable
    commands: dict[str, Command] = {
        "python3 -c pass": ([py, "-c", "pass"], child_env(None), ""),
    }
    for name, tree in trees.items():
        env = child_env(tree)
        commands[f"import the scrubber, {name}"] = ([py, "-c", IMPORT_SCRUB], env, "")
        commands[f"import + scrub a message, {name}"] = ([py, "-c", scrub_one(MESSAGE)], env,
                                                         "")
        commands[f"import + scrub one with numbers, {name}"] = (
            [py, "-c", scrub_one(NUMBERS)], env, "")
        commands[f"tactful remember, {name}"] = (
            [py, "-c", TACTFUL, "--home", str(homes[name]), "remember", "x", "new_{n}",
             "--kind", "reply", "--they", MESSAGE], env, "")
        commands[f"-X importtime: the scrubber, {name}"] = (
            [py, "-X", "importtime", "-c", IMPORT_SCRUB], env, "importtime")
        commands[f"inside: a message, {name}"] = ([py, "-c", inside(MESSAGE)], env, "inside")
        commands[f"inside: one with numbers, {name}"] = ([py, "-c", inside(NUMBERS)], env,
                                                         "inside")
    walls, cpus, own_us, outputs = paired_rounds(commands, rounds, "tactful.core.memory.scrub")
    insides = {name: [(float(a), float(b)) for a, b in (out.split() for out in texts)]
               for name, texts in outputs.items()}
    bare, bare_cpu = print_starts(walls, cpus, own_us, rounds, 48)
    print(f"\n{'inside the process, CPU, median ms':48} {'import':>8} {'scrub':>7} {'both':>7}")
    for name, values in insides.items():
        if values:
            a = statistics.median(v[0] for v in values)
            b = statistics.median(v[1] for v in values)
            both = statistics.median(v[0] + v[1] for v in values)
            print(f"{name:48} {a * 1e3:>8.2f} {b * 1e3:>7.2f} {both * 1e3:>7.2f}")
    names = list(trees)
    if len(names) == 2:
        later, earlier = names
        for what in ("a message", "one with numbers"):
            a, b = (statistics.median(v[0] + v[1] for v in insides[f"inside: {what}, {tree}"])
                    for tree in (later, earlier))
            print(f"  inside, import + first scrub of {what}: this tree / {earlier} {a / b:.2f}")
        print_ratios(walls, cpus, own_us, (later, earlier),
                     ["import the scrubber", "import + scrub a message",
                      "import + scrub one with numbers", "tactful remember"],
                     "the scrubber", (bare, bare_cpu), 34)


def all_texts() -> list[str]:
    texts = [text for _kinds, text, _secrets in secret_cases(
        [CORPUS / "secrets.txt", *sorted(CORPUS.glob("secrets/*.txt")),
         CORPUS / "heldout_secrets.txt"])]
    return texts + lines(CORPUS / "benign_lookalikes.txt") + lines(CORPUS / "prose.txt")


PERSONA_TEXTS = 20_000


def persona_texts() -> list[str]:
    """The distinct texts a `tactful sync-log` of the bench's log screens, as it scrubs them."""
    from sync_log import distinct_texts

    from tactful.core.memory.text import one_line

    return list(dict.fromkeys(one_line(text) for text in distinct_texts(PERSONA_TEXTS)))


def worker(path: Path) -> None:
    """Runs in a fresh process of one tree and prints its figures as JSON, per set of texts:
    the set once cold (what a new process pays, compiling included), then warm, best of three;
    and what each text became, with its kinds."""
    sets: dict[str, list[str]] = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, dict[str, object]] = {}
    for name, texts in sets.items():
        started = time.process_time()
        cold = [[r.text, *r.kinds] for r in map(scrub, texts)]
        first = time.process_time() - started
        warm = []
        for _ in range(3):
            started = time.process_time()
            for text in texts:
                scrub(text)
            warm.append(time.process_time() - started)
        out[name] = {"cold": first / len(texts), "warm": min(warm) / len(texts), "texts": cold}
    print(json.dumps(out))


def per_text(trees: dict[str, Path | None], rounds: int) -> None:
    sets = {"corpus lines": all_texts(), "persona traffic": persona_texts()}
    figures: dict[tuple[str, str], dict[str, list[float]]] = {}
    outputs: dict[tuple[str, str], object] = {}
    with tempfile.TemporaryDirectory() as scratch:
        job = Path(scratch) / "job.json"
        job.write_text(json.dumps(sets), encoding="utf-8")
        for turn in range(rounds):
            order = list(trees.items())
            if turn % 2:
                order.reverse()
            for name, tree in order:
                got = json.loads(run([sys.executable, __file__, "--worker", str(job)],
                                     child_env(tree)).stdout)
                for what, result in got.items():
                    outputs[name, what] = result.pop("texts")
                    for key, value in result.items():
                        figures.setdefault((name, what), {}).setdefault(key, []).append(value)
    names = list(trees)
    print(f"\nPer text, CPU, medians of {rounds} fresh processes per tree in turns (warm: best "
          "of 3 passes in each):")
    for what, texts in sets.items():
        print(f"{what}: {len(texts)} texts, one at a time")
        print(f"  {'':26} {'cold us/text':>13} {'warm us/text':>13}")
        medians = {}
        for name in names:
            medians[name] = {key: statistics.median(values)
                             for key, values in figures[name, what].items()}
            m = medians[name]
            print(f"  {name:26} {m['cold'] * 1e6:>13.1f} {m['warm'] * 1e6:>13.1f}")
        if len(names) == 2:
            a, b = (medians[name] for name in names)
            print(f"  {'this tree / earlier':26} {a['cold'] / b['cold']:>13.2f} "
                  f"{a['warm'] / b['warm']:>13.2f}")
            same = outputs[names[0], what] == outputs[names[1], what]
            print(f"  scrubbed text and kinds the same in both trees, every text: {same}")
            if not same:
                raise SystemExit("the trees scrub differently")


def cost(before: str, rounds: int, persona_only: bool = False) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        # This tree is imported the same way as the earlier one (a folder first on PYTHONPATH,
        # here a link to the tree), not through the editable install's finder.
        here = Path(scratch) / "here"
        here.mkdir()
        (here / "tactful").symlink_to(ROOT, target_is_directory=True)
        trees: dict[str, Path | None] = {"this tree": here}
        if before:
            trees[f"at {before}"] = earlier_tree(before, Path(scratch) / "before")
        homes = {name: Path(scratch) / f"home{i}" for i, name in enumerate(trees)}
        print(f"load average at start: {os.getloadavg()}")
        if not persona_only:
            starts(trees, homes, rounds)
        per_text(trees, min(rounds, 5) if not persona_only else rounds)
        print(f"load average at end: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--misses", action="store_true", help="print the lines missed")
    parser.add_argument("--cost", action="store_true", help="starts and per-text cost")
    parser.add_argument("--before", default=BEFORE, help="the earlier commit ('' for none)")
    parser.add_argument("--persona", action="store_true",
                        help="per-text cost only, corpus lines and persona traffic")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if args.cost or args.persona:
        cost(args.before, args.rounds or (5 if args.persona else 11), args.persona)
        return

    misses: list[str] = []

    def recall(paths: list[Path]) -> tuple[Counter[str], Counter[str]]:
        total: Counter[str] = Counter()
        caught: Counter[str] = Counter()
        for kinds, text, secrets in secret_cases(paths):
            result = scrub(text)
            gone = all(secret not in result.text for secret in secrets)
            markers = set(MARKER.findall(result.text))
            for kind in kinds:
                total[kind] += 1
                if gone and kind in markers:
                    caught[kind] += 1
                else:
                    misses.append(f"{kind}: {text!r} -> {result.text!r}")
        return total, caught

    total, caught = recall([CORPUS / "secrets.txt", *sorted(CORPUS.glob("secrets/*.txt"))])
    held_total, held_caught = recall([CORPUS / "heldout_secrets.txt"])

    benign = {name: lines(CORPUS / name) for name in ("benign_lookalikes.txt", "prose.txt")}
    flagged: dict[str, Counter[str]] = {name: Counter() for name in benign}
    changed: Counter[str] = Counter()
    for name, texts in benign.items():
        for text in texts:
            result = scrub(text)
            if result.text != text:
                changed[name] += 1
                misses.append(f"false positive ({name}): {text!r} -> {result.text!r}")
            for kind in result.kinds:
                flagged[name][kind] += 1

    def share(part: int, whole: int) -> str:
        return f"{part:>4}/{whole:<4} {part / whole if whole else float('nan'):>6.1%}"

    names = list(benign)
    print(
        f"{'kind':<9} {'recall (corpora)':>17} {'recall (held out)':>17}"
        + "".join(f" {n.removesuffix('.txt'):>17}" for n in names)
    )
    for kind in KINDS:
        row = f"{kind:<9} {share(caught[kind], total[kind])}"
        row += f" {share(held_caught[kind], held_total[kind])}"
        for name in names:
            row += f" {share(flagged[name][kind], len(benign[name]))}"
        print(row)
    row = f"{'all':<9} {share(sum(caught.values()), sum(total.values()))}"
    row += f" {share(sum(held_caught.values()), sum(held_total.values()))}"
    for name in names:
        row += f" {share(changed[name], len(benign[name]))}"
    print(row)
    print("(look-alike and prose columns: false positives, lines reported for that kind / lines;")
    print(" 'all': lines changed at all)")
    if args.misses:
        print("\n".join(misses))


if __name__ == "__main__":
    main()
