"""The command responder: one short-lived program per draft, prompt on stdin, reply on stdout.

The program (`responders.<name>.command`, an argument list, never a shell) gets on stdin:

    <system prompt>
    <blank line>
    ---
    <blank line>
    <user prompt>

that is `system + "\\n\\n---\\n\\n" + user + "\\n"`, UTF-8. The system part never holds a line
that is exactly `---` (such a line is written `- - -`), so splitting at the first separator is
always right. The reply is everything it writes on stdout, UTF-8, stripped.

It runs in a fresh temporary folder (removed afterwards, also its TMPDIR), in a new session and
process group, with only PATH, HOME and LANG of ours in its environment: never a keyring
backend, a token or anything else tactful holds. At the timeout the whole group is killed, and
so is anything left in it when the program ends. stderr is discarded (it may echo the prompt).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import tempfile
import time

from tactful.core.errors import ConfigError
from tactful.core.responders.base import DraftFailed, Prompt, ResponderSettings

SEPARATOR = "\n\n---\n\n"
MAX_OUTPUT = 64 * 1024  # bytes of stdout kept: a reply is short, a runaway program is not
_CHUNK = 16 * 1024
_POLL = 0.01  # seconds between looks at whether the program has ended


def stdin_text(prompt: Prompt) -> str:
    """What the program reads: system, the separator, user (see the module's docstring)."""
    system = "\n".join("- - -" if line == "---" else line for line in prompt.system.split("\n"))
    return f"{system}{SEPARATOR}{prompt.user}\n"


def minimal_env(workdir: str) -> dict[str, str]:
    """What the program may see of our environment: enough to find programs and its config."""
    env = {"PATH": os.environ.get("PATH") or os.defpath,
           "LANG": os.environ.get("LANG") or "C.UTF-8",
           "TMPDIR": workdir}
    if os.environ.get("HOME"):
        env["HOME"] = os.environ["HOME"]  # where a tool like `llm` keeps its own settings
    return env


class CommandResponder:
    def __init__(self, settings: ResponderSettings) -> None:
        self.name = settings.name
        self.argv = list(settings.config.command)
        self.timeout = settings.config.timeout
        if not self.argv:
            raise ConfigError(f"responders.{self.name}.command is empty; give the program and "
                              "its arguments as a list, e.g. [llm, -m, local-model]")

    def draft(self, prompt: Prompt) -> str:
        data = stdin_text(prompt).encode("utf-8")
        with tempfile.TemporaryDirectory(prefix="tactful-responder-",
                                         ignore_cleanup_errors=True) as workdir:
            code, output = self._run(data, workdir)
        # Reasons name what went wrong, never what was read or written: both hold people's words.
        if code < 0:
            raise DraftFailed(self.name, f"the command was killed by signal {-code}")
        if code > 0:
            raise DraftFailed(self.name, f"the command exited with status {code}")
        try:
            text = output.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise DraftFailed(self.name, "the command's output is not UTF-8") from None
        if not text:
            raise DraftFailed(self.name, "the command wrote nothing")
        return text

    def _run(self, data: bytes, workdir: str) -> tuple[int, bytes]:
        """(exit status, stdout) of a program that ended in time; DraftFailed otherwise."""
        deadline = time.monotonic() + self.timeout
        try:
            process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, cwd=workdir, env=minimal_env(workdir),
                start_new_session=True, close_fds=True)
        except OSError as exc:
            # The program's name is config, not a prompt: safe and useful to say.
            raise DraftFailed(self.name, f"could not start {self.argv[0]!r} "
                                         f"({type(exc).__name__}: {exc.strerror or exc}); "
                                         f"check responders.{self.name}.command") from None
        failure = None
        try:
            output = self._exchange(process, data, deadline)
            if output is not None and len(output) > MAX_OUTPUT:
                failure = f"the command wrote more than {MAX_OUTPUT} bytes and was killed"
            elif output is None or not _wait_unreaped(process.pid, deadline):
                failure = f"the command took longer than {self.timeout}s and was killed"
        finally:
            # Kill the group before reaping the leader: while it is a zombie its pid (the
            # group's id) cannot be reused, so this never signals a stranger's processes. It
            # also ends helpers the program left behind: nothing outlives a draft.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    pipe.close()
        if failure is not None:
            raise DraftFailed(self.name, failure)
        return process.returncode, output or b""

    def _exchange(self, process: subprocess.Popen[bytes], data: bytes,
                  deadline: float) -> bytes | None:
        """Write stdin and read stdout together (either may block the other); None on timeout."""
        assert process.stdin is not None and process.stdout is not None
        os.set_blocking(process.stdin.fileno(), False)
        chunks: list[bytes] = []
        size = 0
        sent = 0
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            if data:
                selector.register(process.stdin, selectors.EVENT_WRITE)
            else:
                process.stdin.close()
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                for key, _ in selector.select(left):
                    if key.fileobj is process.stdin:
                        try:
                            sent += os.write(process.stdin.fileno(), data[sent:sent + _CHUNK])
                        except BrokenPipeError:
                            sent = len(data)  # it stopped reading: its choice
                        if sent >= len(data):
                            selector.unregister(process.stdin)
                            process.stdin.close()
                        continue
                    chunk = os.read(process.stdout.fileno(), _CHUNK)
                    if not chunk:
                        selector.unregister(process.stdout)
                        continue
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > MAX_OUTPUT:
                        return b"".join(chunks)  # enough to know it is too much: stop here
        return b"".join(chunks)


def _wait_unreaped(pid: int, deadline: float) -> bool:
    """Wait until the program ends without reaping it (see the killpg above); False on timeout."""
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(_POLL)
    return False
