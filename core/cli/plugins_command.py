"""`tactful plugins`: what is loaded, from where, and what each plugin registers."""

from __future__ import annotations

import argparse
import json

from tactful.core.cli.context import Context

REGISTERS = ("register_adapters", "register_platforms", "register_guards",
             "register_responders", "register_routines", "register_services",
             "register_commands", "register_emulators")


def plugins(context: Context, args: argparse.Namespace) -> int:
    host = context.plugins
    found: dict[str, dict[str, object]] = {}
    for name, value in sorted(host.installed.items()):
        found[name] = {"name": name, "from": value, "loaded": False, "disabled": False,
                       "registers": {}}
    for name, plugin in host.manager.list_name_plugin():
        entry = found.setdefault(name, {"name": name, "from": getattr(plugin, "__name__",
                                                                        repr(plugin)),
                                        "loaded": True, "disabled": False, "registers": {}})
        entry["loaded"] = True
    for name in host.disabled:
        if name in found:
            found[name]["disabled"] = True
    for hook in REGISTERS:
        for registered, (plugin, _) in host.collect(hook).items():
            if plugin in found:
                registers = found[plugin]["registers"]
                assert isinstance(registers, dict)
                registers.setdefault(hook.removeprefix("register_"), []).append(registered)
    problems = [*host.load_errors, *host.load_warnings]
    if args.json:
        print(json.dumps({"plugins": list(found.values()), "problems": problems}, indent=2))
        return 4 if host.load_errors else 0
    for entry in found.values():
        state = ("disabled" if entry["disabled"] else "loaded" if entry["loaded"]
                 else "not loaded")
        registers = entry["registers"]
        assert isinstance(registers, dict)
        what = "; ".join(f"{kind}: {', '.join(sorted(names))}"
                         for kind, names in sorted(registers.items())) or "nothing"
        print(f"{entry['name']} ({entry['from']}) — {state} — {what}")
    for problem in problems:
        print(f"problem: {problem}")
    # A plugin that failed to load stops every send (docs/sending.md): say so in the code too.
    return 4 if host.load_errors else 0
