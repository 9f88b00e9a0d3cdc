"""Shared fixtures for the SEAL interoperability tests: the `zeppelin` binary, key directories
made by `zeppelin keygen`, and SEAL (seal-python 4.4.0) objects loaded from them.

The binary is $ZEPPELIN_BIN, default target/release/zeppelin under the repository root.
"""

import os
import random
import shutil
import subprocess
from pathlib import Path

import numpy
import pytest
import seal

ROOT = Path(__file__).resolve().parents[2]
N = 4096
T = 65537
PRESETS = ["seal4096", "zeppelin4096"]


def zeppelin_bin():
    return os.environ.get("ZEPPELIN_BIN", str(ROOT / "target" / "release" / "zeppelin"))


def run(*args, ok=True):
    """Runs `zeppelin ARGS`; with ok=True it must succeed, with ok=False it must fail with
    exactly one line on stderr."""
    proc = subprocess.run(
        [zeppelin_bin(), *[str(a) for a in args]], capture_output=True, text=True
    )
    if ok:
        assert proc.returncode == 0, f"zeppelin {args} failed: {proc.stderr}"
    else:
        assert proc.returncode != 0, f"zeppelin {args} unexpectedly succeeded"
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, f"expected one error line, got: {proc.stderr!r}"
        assert lines[0].startswith("zeppelin: error: "), lines[0]
    return proc


@pytest.fixture(scope="session", autouse=True)
def binary_exists():
    path = zeppelin_bin()
    assert Path(path).is_file(), (
        f"zeppelin binary not found at {path}: build it with "
        "`cargo build --release -p zeppelin-cli` or set ZEPPELIN_BIN"
    )


class Keys:
    """A key directory from `zeppelin keygen` and the SEAL objects that read it."""

    def __init__(self, directory, preset, generate=True):
        self.dir = Path(directory)
        self.preset = preset
        if generate:
            run("keygen", "--dir", self.dir, "--preset", preset)
        self.parms = seal.EncryptionParameters(seal.scheme_type.bfv)
        self.parms.load(str(self.dir / "params.seal"))
        self.ctx = seal.SEALContext(self.parms)
        assert self.ctx.parameters_set(), self.ctx.parameter_error_message()
        self.sk = seal.SecretKey()
        self.sk.load(self.ctx, str(self.dir / "secret.seal"))
        self.pk = seal.PublicKey()
        self.pk.load(self.ctx, str(self.dir / "public.seal"))
        self.encoder = seal.BatchEncoder(self.ctx)
        self.decryptor = seal.Decryptor(self.ctx, self.sk)
        self.evaluator = seal.Evaluator(self.ctx)

    def path(self, name):
        return self.dir / name

    def encode(self, values):
        return self.encoder.encode(numpy.array(values, dtype=numpy.uint64))

    def seal_decrypt(self, ct):
        assert self.decryptor.invariant_noise_budget(ct) > 0
        return [int(v) for v in self.encoder.decode_uint64(self.decryptor.decrypt(ct))]

    def load_ct(self, path):
        ct = seal.Ciphertext()
        ct.load(self.ctx, str(path))
        return ct

    def save_ct(self, ct, name):
        path = self.path(name)
        ct.save(str(path))
        return path

    def zeppelin_decrypt(self, path):
        out = run("decrypt", "--dir", self.dir, "--in", path).stdout.split()
        assert len(out) == N
        return [int(v) for v in out]

    def encrypt_here(self, values, mode, name, level=None):
        vpath = self.path(name + ".txt")
        vpath.write_text("".join(f"{v}\n" for v in values))
        out = self.path(name + ".bin")
        extra = ["--level", level] if level else []
        run("encrypt", "--dir", self.dir, "--mode", mode, "--in", vpath, "--out", out, *extra)
        return out

    def adapt(self, path, name, compress="none"):
        out = self.path(name + ".seal")
        run("adapt", "--dir", self.dir, "--in", path, "--out", out, "--compress", compress)
        return out


@pytest.fixture(scope="session", params=PRESETS)
def keys(request, tmp_path_factory):
    return Keys(tmp_path_factory.mktemp(request.param), request.param)


@pytest.fixture(scope="session")
def seal_keys(tmp_path_factory):
    return Keys(tmp_path_factory.mktemp("seal4096-only"), "seal4096")


def random_values(seed, count=N):
    rng = random.Random(repr(seed))
    return [rng.randrange(T) for _ in range(count)] + [0] * (N - count)


@pytest.fixture
def copy_keys(tmp_path):
    """A private copy of a key directory, for tests that replace files in it."""

    def make(keys):
        new = tmp_path / "keys"
        shutil.copytree(keys.dir, new)
        return Keys(new, keys.preset, generate=False)

    return make
