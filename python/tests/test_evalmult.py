"""`zeppelin.EvalmultClient` against the real `zeppelin evalmult serve`: the OpenFHE 1.5.1
vectors (shared/vectors/openfhe-bv-n4096-l4-b2, read here with NumPy alone) streamed as one
batch, the relinearized products equal to OpenFHE's byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import zeppelin
from conftest import REPO
from servers import running


def vector_dir() -> Path:
    base = os.environ.get("ZEPPELIN_VECTORS")
    root = Path(base) if base else REPO.parent / "shared" / "vectors"
    return root / "openfhe-bv-n4096-l4-b2"


@pytest.fixture(scope="module")
def vectors():
    d = vector_dir()
    assert (d / "manifest.json").is_file(), f"OpenFHE vectors not found at {d} (set ZEPPELIN_VECTORS)"
    m = json.loads((d / "manifest.json").read_text())
    shape = (m["towers"], m["ring_dim"])

    def poly(name):
        return np.fromfile(d / name, dtype="<u4").reshape(shape)

    evk_a = np.stack([poly(f"evk_a_{i}.bin") for i in range(m["digits"])])
    evk_b = np.stack([poly(f"evk_b_{i}.bin") for i in range(m["digits"])])
    x = np.stack([[poly(f"ct{k}_x0.bin"), poly(f"ct{k}_x1.bin")] for k in range(m["batch"])])
    y = np.stack([[poly(f"ct{k}_y0.bin"), poly(f"ct{k}_y1.bin")] for k in range(m["batch"])])
    want = [[(d / f"ct{k}_relin{c}.bin").read_bytes() for c in (0, 1)] for k in range(m["batch"])]
    return m, evk_a, evk_b, x, y, want


@pytest.fixture(scope="module")
def server(binary, vectors):
    ring_dim = str(vectors[0]["ring_dim"])
    args = [binary, "evalmult", "serve", "--listen", "127.0.0.1:0", "--ring-dim", ring_dim]
    with running(args, "stderr", f"serving ring dimension {ring_dim} on") as address:
        yield address


def test_batch_equals_openfhe_byte_for_byte(server, vectors):
    m, evk_a, evk_b, x, y, want = vectors
    client = zeppelin.EvalmultClient(server, timeout=60)
    for _session in range(2):  # two sessions on one connection
        result = client.eval_mult(m["moduli"], evk_a, evk_b, x, y)
        assert result.relin.shape == x.shape and result.relin.dtype == np.uint32
        assert result.seconds > 0
        for k in range(m["batch"]):
            for c in (0, 1):
                assert result.relin[k, c].astype("<u4").tobytes() == want[k][c], (k, c)


def test_single_pair_batch(server, vectors):
    m, evk_a, evk_b, x, y, want = vectors
    result = zeppelin.EvalmultClient(server).eval_mult(m["moduli"], evk_a, evk_b, x[1:], y[1:])
    assert result.relin[0, 1].astype("<u4").tobytes() == want[1][1]


def test_evalmult_errors(server, vectors):
    m, evk_a, evk_b, x, y, _ = vectors
    client = zeppelin.EvalmultClient(server, timeout=60)
    bad = x.copy()
    bad[0, 0, 2, 5] = m["moduli"][2]  # a residue not below its modulus
    with pytest.raises(zeppelin.EvalmultError):
        client.eval_mult(m["moduli"], evk_a, evk_b, bad, y)
    with pytest.raises(zeppelin.EvalmultError):
        client.eval_mult([m["moduli"][0] + 2] + m["moduli"][1:], evk_a, evk_b, x, y)
    with pytest.raises(zeppelin.InputError, match="shape"):
        client.eval_mult(m["moduli"], evk_a, evk_b, x[:, 0], y[:, 0])
    with pytest.raises(zeppelin.InputError, match="moduli"):
        client.eval_mult(m["moduli"][:3], evk_a, evk_b, x, y)
    # The connection survives refused inputs.
    assert client.eval_mult(m["moduli"], evk_a, evk_b, x, y).relin.shape == x.shape
    with pytest.raises(zeppelin.EvalmultError, match="connect"):
        zeppelin.EvalmultClient("127.0.0.1:1")


def test_gil_is_released_during_a_session(vectors):
    """A session against a stand-in server that is Python code in this process: it can read
    the frames and answer only if the client released the GIL while it streams and waits.
    Its RLER answer comes back as an EvalmultError with the server's message."""
    import socket
    import struct
    import threading

    m, evk_a, evk_b, x, y, _ = vectors
    listener = socket.create_server(("127.0.0.1", 0))
    frames_read: list[int] = []

    def serve_once() -> None:
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as reader:
            pair_count = (m["towers"] + 1) // 2
            for _ in range(1 + pair_count):  # RLPT, then one frame per tower pair
                (length,) = struct.unpack("<Q", reader.read(8))
                frame = reader.read(8 * length)
                frames_read.append(struct.unpack_from("<Q", frame)[0] & 0xFFFF_FFFF)
            message = b"stand-in server is busy"
            padded = message + b"\0" * (-len(message) % 8)
            words = [0x524C4552, (len(message) << 32) | 9]
            body = struct.pack(f"<{len(words)}Q", *words) + padded
            conn.sendall(struct.pack("<Q", len(body) // 8) + body)

    server = threading.Thread(target=serve_once, daemon=True)
    server.start()
    try:
        client = zeppelin.EvalmultClient(f"127.0.0.1:{listener.getsockname()[1]}", timeout=20)
        with pytest.raises(zeppelin.EvalmultError, match="stand-in server is busy"):
            client.eval_mult(m["moduli"], evk_a, evk_b, x, y)
        assert frames_read == [0x524C5054] + [0x524C4D44] * ((m["towers"] + 1) // 2)  # RLPT, RLMD...
    finally:
        server.join(5)
        listener.close()
