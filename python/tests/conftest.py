"""Shared fixtures: the `zeppelin` binary (for `zeppelin keys` and the servers), a key
directory made by this package's `keygen`, and seal-python objects loaded from the same
files, so both libraries work in one process on the same keys and ciphertexts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import seal

import zeppelin

REPO = Path(__file__).resolve().parents[2]


def zeppelin_bin() -> str:
    return os.environ.get("ZEPPELIN_BIN", str(REPO / "target" / "release" / "zeppelin"))


@pytest.fixture(scope="session")
def binary() -> str:
    path = zeppelin_bin()
    assert Path(path).is_file(), (
        f"zeppelin binary not found at {path}: build it with "
        "`cargo build --release -p zeppelin-cli` or set ZEPPELIN_BIN"
    )
    return path


class Seal:
    """seal-python's view of a key directory."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.parms = seal.EncryptionParameters(seal.scheme_type.bfv)
        self.parms.load(str(directory / "params.seal"))
        self.ctx = seal.SEALContext(self.parms)
        assert self.ctx.parameters_set(), self.ctx.parameter_error_message()
        self.sk = seal.SecretKey()
        self.sk.load(self.ctx, str(directory / "secret.seal"))
        self.pk = seal.PublicKey()
        self.pk.load(self.ctx, str(directory / "public.seal"))
        self.encoder = seal.BatchEncoder(self.ctx)
        self.encryptor = seal.Encryptor(self.ctx, self.pk)
        self.decryptor = seal.Decryptor(self.ctx, self.sk)
        self.evaluator = seal.Evaluator(self.ctx)
        if (directory / "relin.seal").exists():
            self.relin = seal.RelinKeys()
            self.relin.load(self.ctx, str(directory / "relin.seal"))
        if (directory / "galois.seal").exists():
            self.galois = seal.GaloisKeys()
            self.galois.load(self.ctx, str(directory / "galois.seal"))
        self._count = 0

    def load(self, data: bytes) -> seal.Ciphertext:
        """A SEAL Ciphertext from bytes (seal-python loads from files)."""
        self._count += 1
        path = self.dir / f"ct-{self._count}.seal"
        path.write_bytes(data)
        ct = seal.Ciphertext()
        ct.load(self.ctx, str(path))
        path.unlink()
        return ct

    def encrypt(self, values) -> seal.Ciphertext:
        return self.encryptor.encrypt(self.encoder.encode(np.asarray(values, dtype=np.uint64)))

    def decrypt(self, ct: seal.Ciphertext) -> np.ndarray:
        assert self.decryptor.invariant_noise_budget(ct) > 0
        return np.asarray(self.encoder.decode_uint64(self.decryptor.decrypt(ct)), dtype=np.int64)


@pytest.fixture(scope="session")
def keydir(tmp_path_factory, binary) -> Path:
    directory = tmp_path_factory.mktemp("keys") / "seal4096"
    zeppelin.keygen(directory, preset="seal4096")
    subprocess.run([binary, "keys", "--dir", str(directory), "--relin", "--galois"], check=True)
    return directory


@pytest.fixture(scope="session")
def keys(keydir) -> zeppelin.KeyDirectory:
    return zeppelin.KeyDirectory(keydir)


@pytest.fixture(scope="session")
def sealkeys(keydir) -> Seal:
    return Seal(keydir)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(16)


# Where an uncompressed SEAL Ciphertext names the SEAL version that wrote it (the minor version
# byte of its SEALHeader and of its data DynArray's): 4.1 from the Rust side, 4.4 from
# seal-python 4.4.0 (as in tests/interop/test_eval.py).
VERSION_MINOR_AT = (4, 16 + 73 + 4)


def assert_seal_bytes(ours: bytes, theirs: seal.Ciphertext, what: str = "ciphertext") -> None:
    """`ours` is SEAL's serialization of `theirs` byte for byte, but for the minor version."""
    want = bytes(theirs.to_string())
    assert len(ours) == len(want), (what, len(ours), len(want))
    differing = [i for i, (a, b) in enumerate(zip(ours, want)) if a != b]
    assert all(i in VERSION_MINOR_AT for i in differing), (
        f"{what}: {len(differing)} of {len(ours)} bytes differ from SEAL's, first at {differing[:5]}"
    )
    assert all(ours[i] == 1 for i in VERSION_MINOR_AT), what
