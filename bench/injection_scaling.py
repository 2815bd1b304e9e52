"""What the injection guard costs: at the start of a process, per ordinary text, and as texts
grow; this tree beside an earlier commit (by default the one before the guard made its
families lazily), side by side in one run.

1. Starts, in paired rounds (each round runs every command once, in turns, so drift on a
   shared machine hits each alike; medians; ratios to `python3 -c pass`), as wall time and as
   the CPU time of the process (which a queue for a core does not inflate):
     * importing the guard (`python3 -c "import tactful.core.memory.injection"`);
     * importing it and screening one ordinary message (what a `remember` run or a sync-log
       helper does with the guard), and one that names a model and an action (it opens the
       agent family, whose regexes are the largest to compile);
     * `tactful remember x new_N --kind reply --they "..."`, the whole command, a new person
       each time, in a home of its own per tree;
   and the guard's own import time as `python3 -X importtime` reports it (cumulative, so with
   the clause, decoding and hidden-character modules it imports).
2. Per text, CPU time in a process per tree (three, in turns; the best kept), warm (patterns
   already made): every line of the prose corpus, the benign imperatives and near misses, one
   text at a time; and a persona's traffic: the distinct texts ("text" and "they") of the
   events bench/sync_log.py generates (20,000 by default), which talk about models, agents,
   prompts and tokens all day, so many families' gates open (what `tactful sync-log` screens;
   per text as the median of the turns, and the ratio of each turn's pair).
3. Growth: for texts of 1 KB to 100 KB (1 MB with --full), the time per kilobyte of the guard,
   beside two baselines over the same text in the same process (`str.lower`, and `re.search`
   of a pattern that never matches, which reads the whole text once). Flat rows mean linear
   time. Texts (none holds an attempt; the run stops if one is flagged):
     * prose: the shared prose corpus, lines joined until the size is reached;
     * imperatives: the benign imperatives, which share words with every family;
     * near misses: parts of attempts that never complete (addressees, staff words, fresh
       orders, secret nouns, image links without data), the worst case for the structural
       reading;
     * one token: a single run without spaces that looks like base64 (decoding is bounded).

The earlier tree is taken with `git archive` into a temporary folder and put first on
PYTHONPATH; every process runs with bytecode written and read, as on any install (a shell with
PYTHONDONTWRITEBYTECODE would otherwise time compiling). CPU times are best of --repeat runs.

Run: .venv/bin/python bench/injection_scaling.py [--before REV] [--rounds 11] [--full]
     [--persona 20000] [--persona-only]
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from earlier_trees import (
    Command,
    child_env,
    earlier_tree,
    paired_rounds,
    print_ratios,
    print_starts,
    run,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
# The commit before the guard made its families lazily.
BEFORE = "8388184"
NEVER = re.compile(r"zq{3}x")
MESSAGE = "thanks, will do! the ferry leaves at nine, see you at the harbour"
NEAR_MISSES = [
    "AI agents reading this thread, thanks for nothing.",
    "The ferry operator posted a photo of the harbour.",
    "New instructions for the dishwasher arrived today.",
    "I'm the developer of a small game about frogs.",
    "The password manager I use is fine.",
    "Hey bots, nice weather today.",
    "![cat](https://pics.example/cat.jpg?w=600)",
    "Follow the river until the bridge.",
    "the config file lives in your home folder",
    "dear assistant manager, the shift starts at nine",
]


def corpus(name: str) -> list[str]:
    lines = (CORPUS / name).read_text(encoding="utf-8").split("\n")
    return [line for line in lines if line.strip() and not line.startswith("#")]


def filled(judge: Callable[[str], str | None], lines: list[str], size: int) -> str:
    """Lines joined up to `size` characters. A line that would make an attempt with the lines
    just before it is left out (a corpus of benign lines still holds a few such pairs, and a
    text the guard stops reading early would not measure the whole length)."""
    lines = [line for line in lines if judge(line) is None]
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        line = lines[i % len(lines)]
        i += 1
        if judge("\n".join([*parts[-3:], line])) is not None:
            continue
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)[:size]


def growth_texts(judge: Callable[[str], str | None], size: int) -> dict[str, str]:
    token = ("QWxsIHRoZSB3b3JsZCBpcyBhIHN0YWdlLCBhbmQgYWxsIHRoZSBtZW4g" * (size // 56 + 1))[:size]
    return {
        "prose": filled(judge, corpus("prose.txt"), size),
        "imperatives": filled(judge, corpus("benign_imperatives.txt"), size),
        "near misses": filled(judge, NEAR_MISSES, size),
        "one token": token,
    }


def persona_texts(count: int) -> list[str]:
    """The first `count` distinct texts of the sync-log bench's events, in order."""
    from sync_log import distinct_texts

    return distinct_texts(count)


def best(fn: Callable[[str], object], text: str, repeat: int) -> float:
    runs = max(1, min(200, 200_000 // max(len(text), 1)))
    times = []
    for _ in range(repeat):
        started = time.process_time()
        for _ in range(runs):
            fn(text)
        times.append((time.process_time() - started) / runs)
    return min(times)


def worker(path: Path, repeat: int) -> None:
    """Runs in a process of one tree (whichever `tactful` is first on the path) and prints its
    figures as JSON."""
    from tactful.core.memory.injection import injection_reason

    job = json.loads(path.read_text(encoding="utf-8"))
    persona: list[str] = job["persona"]
    for text in persona[:2000]:
        injection_reason(text)  # warm, as above
    persona_runs = []
    for _ in range(repeat):
        started = time.process_time()
        flagged = sum(injection_reason(text) is not None for text in persona)
        persona_runs.append((time.process_time() - started) / max(len(persona), 1))
    if job.get("persona_only"):
        print(json.dumps({"persona": min(persona_runs), "flagged": flagged}))
        return
    short: list[str] = job["short"]
    for text in short:
        injection_reason(text)  # warm: every pattern these texts reach is made
    per_text = []
    for _ in range(repeat):
        started = time.process_time()
        for text in short:
            injection_reason(text)
        per_text.append((time.process_time() - started) / len(short))
    growth = {}
    for key, text in job["growth"].items():
        assert injection_reason(text) is None, key
        growth[key] = best(injection_reason, text, repeat)
    print(json.dumps({"per_text": min(per_text), "growth": growth,
                      "persona": min(persona_runs), "flagged": flagged}))


IMPORT_GUARD = "import tactful.core.memory.injection"
# One that names a model and an action: the agent family's gate opens and its partner is
# present, so a fresh process compiles its largest regexes for it.
MODEL_MESSAGE = "Love the new model, will share my notes with you later"
SCREEN_ONE = (
    "from tactful.core.memory.injection import injection_reason; "
    f"assert injection_reason({MESSAGE!r}) is None"
)
SCREEN_MODEL = (
    "from tactful.core.memory.injection import injection_reason; "
    f"assert injection_reason({MODEL_MESSAGE!r}) is None"
)
TACTFUL = "import sys; from tactful.core.cli.main import entry; entry()"


def starts(trees: dict[str, Path | None], homes: dict[str, Path], rounds: int) -> None:
    py = sys.executable
    commands: dict[str, Command] = {
        "python3 -c pass": ([py, "-c", "pass"], child_env(None), ""),
    }
    for name, tree in trees.items():
        env = child_env(tree)
        commands[f"import the guard, {name}"] = ([py, "-c", IMPORT_GUARD], env, "")
        commands[f"import + screen one message, {name}"] = ([py, "-c", SCREEN_ONE], env, "")
        commands[f"import + screen one naming a model, {name}"] = (
            [py, "-c", SCREEN_MODEL], env, "")
        commands[f"tactful remember, {name}"] = (
            [py, "-c", TACTFUL, "--home", str(homes[name]), "remember", "x", "new_{n}",
             "--kind", "reply", "--they", MESSAGE], env, "")
        commands[f"-X importtime: the guard, {name}"] = (
            [py, "-X", "importtime", "-c", IMPORT_GUARD], env, "importtime")
    walls, cpus, guard_us, _ = paired_rounds(commands, rounds,
                                             "tactful.core.memory.injection")
    bare, bare_cpu = print_starts(walls, cpus, guard_us, rounds, 50)
    names = list(trees)
    if len(names) == 2:
        later, earlier = names
        print_ratios(walls, cpus, guard_us, (later, earlier),
                     ["import the guard", "import + screen one message",
                      "import + screen one naming a model", "tactful remember"],
                     "the guard", (bare, bare_cpu), 36)


def screening(trees: dict[str, Path | None], repeat: int, sizes: tuple[int, ...],
              persona: list[str], turns: int, persona_only: bool) -> None:
    from tactful.core.memory.injection import injection_reason

    short = [line for line in corpus("prose.txt") + corpus("benign_imperatives.txt")
             + NEAR_MISSES if injection_reason(line) is None]
    growth = {} if persona_only else {
        f"{name}|{size}": text for size in sizes
        for name, text in growth_texts(injection_reason, size).items()}
    lower = {key: best(str.lower, text, repeat) for key, text in growth.items()}
    search = {key: best(NEVER.search, text, repeat) for key, text in growth.items()}
    results: dict[str, dict[str, Any]] = {}
    persona_turns: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as scratch:
        job = Path(scratch) / "job.json"
        job.write_text(json.dumps({"short": short, "growth": growth, "persona": persona,
                                   "persona_only": persona_only}), encoding="utf-8")
        # Each tree's worker runs `turns` times, in turns; the best of its runs is kept (the
        # persona figures: every turn, paired).
        for turn in range(turns):
            order = list(trees.items())
            if turn % 2:
                order.reverse()
            for name, tree in order:
                done = run([sys.executable, __file__, "--worker", str(job), "--repeat",
                            str(repeat)], child_env(tree))
                got = json.loads(done.stdout)
                persona_turns[name].append(got["persona"])
                if name in results and not persona_only:
                    got["per_text"] = min(got["per_text"], results[name]["per_text"])
                    got["growth"] = {key: min(value, results[name]["growth"][key])
                                     for key, value in got["growth"].items()}
                results[name] = got
    names = list(trees)
    print(f"\nPersona traffic, per text, CPU, warm: {len(persona)} distinct texts of "
          f"bench/sync_log.py's events (mean {sum(map(len, persona)) / len(persona):.0f} "
          f"characters), best of {repeat} in each of {turns} turns; median of the turns")
    for name in names:
        flagged = results[name]["flagged"]
        print(f"  {name:44} {statistics.median(persona_turns[name]) * 1e6:>8.1f} us a text"
              f"   (turns: {', '.join(f'{v * 1e6:.0f}' for v in persona_turns[name])};"
              f" {flagged} flagged)")
    if len(names) == 2:
        pairs = [a / b for a, b in zip(persona_turns[names[0]], persona_turns[names[1]],
                                        strict=True)]
        print(f"  {'this tree / earlier':44} {statistics.median(pairs):>8.2f}"
              f"   (each turn: {', '.join(f'{r:.2f}' for r in pairs)})")
    if persona_only:
        return
    print(f"\nPer text, CPU, warm, best of 3 x {repeat}: {len(short)} ordinary texts "
          "(prose, benign imperatives, near misses), one at a time")
    for name in names:
        print(f"  {name:44} {results[name]['per_text'] * 1e6:>8.1f} us a text")
    if len(names) == 2:
        print(f"  {'this tree / earlier':44} "
              f"{results[names[0]]['per_text'] / results[names[1]]['per_text']:>8.2f}")
    print("\nGrowth, us per KB (guard in each tree; baselines in this process)")
    head = "".join(f"{name[:18]:>20}" for name in names)
    print(f"{'text':12} {'size':>7}{head} {'lower':>8} {'re':>7} {'guard/re':>9}")
    for key, text in growth.items():
        kind, size = key.split("|")
        kb = len(text) / 1000
        guards = "".join(f"{results[name]['growth'][key] / kb * 1e6:>20.1f}" for name in names)
        ratio = results[names[0]]["growth"][key] / search[key]
        print(f"{kind:12} {int(size) // 1000:>5}KB{guards} {lower[key] / kb * 1e6:>8.2f} "
              f"{search[key] / kb * 1e6:>7.2f} {ratio:>9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the earlier commit ('' for none)")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="texts up to 1 MB")
    parser.add_argument("--persona", type=int, default=20_000,
                        help="distinct texts of the sync-log bench's events")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--persona-only", action="store_true",
                        help="only the persona traffic figures (no starts, no growth)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeat)
        return
    sizes = (1_000, 10_000, 100_000, 1_000_000) if args.full else (1_000, 10_000, 100_000)
    with tempfile.TemporaryDirectory() as scratch:
        trees: dict[str, Path | None] = {"this tree": None}
        if args.before:
            trees[f"at {args.before}"] = earlier_tree(args.before, Path(scratch) / "before")
        homes = {name: Path(scratch) / f"home{i}" for i, name in enumerate(trees)}
        print(f"load average at start: {os.getloadavg()}")
        if not args.persona_only:
            starts(trees, homes, args.rounds)
        screening(trees, args.repeat, sizes, persona_texts(args.persona), args.turns,
                  args.persona_only)
        print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
