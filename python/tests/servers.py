"""Real servers for the tests: `zeppelin serve` and `zeppelin evalmult serve` started from the
binary on port 0 of 127.0.0.1, their address read from the line they print, and stopped when
the test is done (even when it fails)."""

from __future__ import annotations

import subprocess
import threading
from contextlib import contextmanager
from typing import Iterator, Sequence


@contextmanager
def running(args: Sequence[str], stream: str, marker: str, timeout: float = 60.0) -> Iterator[str]:
    """Starts `args`, waits (at most `timeout` s) for the line of `stream` ("stdout" or
    "stderr") that contains `marker`, and yields what follows the marker on that line."""
    proc = subprocess.Popen(
        list(args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if stream == "stdout" else subprocess.DEVNULL,
        stderr=subprocess.PIPE if stream == "stderr" else subprocess.DEVNULL,
        text=True,
    )
    try:
        pipe = proc.stdout if stream == "stdout" else proc.stderr
        assert pipe is not None
        found: list[str] = []
        seen: list[str] = []

        def read() -> None:
            for line in pipe:
                if not found:
                    seen.append(line)
                    if marker in line:
                        found.append(line.split(marker, 1)[1].strip())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(0.05)
        waited = 0.0
        while not found and proc.poll() is None and waited < timeout:
            reader.join(0.1)
            waited += 0.1
        assert found, f"{args[0]} printed no {marker!r} line (exit {proc.poll()}): {''.join(seen)[-2000:]}"
        yield found[0]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
