"""Shared fixtures for the SEAL interoperability tests: the `zeppelin` binary, key directories
made by `zeppelin keygen`, and SEAL (seal-python 4.4.0) objects loaded from them.

The binary is $ZEPPELIN_BIN, default target/release/zeppelin under the repository root.

Nothing here assumes a ring size or a number of primes: a `Keys` object reads the degree n and
the plaintext modulus from the key directory's params.seal, SEAL's data-level and key-level
prime counts from the SEAL context chain, and the device's number of data primes from the size
of device.pk. The exact byte counts each preset must produce are in `EXPECTED`, and
`test_expected_sizes_follow_the_layout` checks that table against the SEAL Ciphertext layout
(`full_len`, `seeded_len`, `kswitch_len`) over the derived counts.
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
PRESETS = ["seal4096", "zeppelin4096", "seal8192"]
# The presets with a special prime: SEAL's data primes are the device's, SEAL's keys cover the
# device (`encrypt --mode public` uses D/public.seal), and params.seal is the preset's own.
SEAL_PRESETS = ["seal4096", "seal8192"]

# What each preset must be and produce, exactly. n: ring degree; device_primes: the device's
# data primes (its full level); seal_primes: SEAL's first data level (what `adapt` writes);
# key_primes: SEAL's key level (data primes and the special prime); seeded / full: the device
# wire forms at the full device level; adapted: the SEAL ciphertext `adapt` writes (SEAL's first
# data level, compr_mode none); seal_seeded: SEAL's own seeded form (`encrypt --mode seal-*`, at
# SEAL's first data level); relin / relin_seeded: D/relin.seal from `zeppelin keys`.
EXPECTED = {
    "seal4096": dict(
        n=4096, device_primes=3, seal_primes=3, key_primes=4,
        seeded=98_498, full=196_721, adapted=196_721, seal_seeded=98_498,
        relin=786_835, relin_seeded=393_862,
    ),
    "zeppelin4096": dict(
        n=4096, device_primes=4, seal_primes=3, key_primes=4,
        seeded=131_266, full=262_257, adapted=196_721, seal_seeded=98_498,
        relin=786_835, relin_seeded=393_862,
    ),
    "seal8192": dict(
        n=8192, device_primes=7, seal_primes=7, key_primes=8,
        seeded=458_946, full=917_617, adapted=917_617, seal_seeded=458_946,
        relin=7_340_887, relin_seeded=3_671_438,
    ),
}

# SEAL 4.1 Ciphertext layout with compr_mode none (crates/zeppelin/src/wire.rs): SEALHeader 16,
# parms_id 32, is_ntt_form 1, size / poly_modulus_degree / coeff_modulus_size 8 each, scale 8,
# correction_factor 8 (73 bytes of fields after the header), the DynArray's SEALHeader 16 and
# count 8; then the residues, 8 bytes each. The seeded form carries c0 only and a
# UniformRandomGeneratorInfo of 81 bytes.
CT_PREFIX = 16 + 73 + 16 + 8
PRNG_INFO = 81


def full_len(primes, n):
    return CT_PREFIX + 8 * 2 * primes * n


def seeded_len(primes, n):
    return CT_PREFIX + 8 * primes * n + PRNG_INFO


def kswitch_len(keys, primes, n, seeded):
    """SEAL KSwitchKeys (RelinKeys) with one vector of `keys` keys, each a PublicKey at a level
    of `primes` primes: SEALHeader 16, parms_id 32, u64 outer count, u64 inner count, keys."""
    one = seeded_len(primes, n) if seeded else full_len(primes, n)
    return 16 + 32 + 8 + 8 + keys * one


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
        self.n = self.parms.poly_modulus_degree()
        self.t = self.parms.plain_modulus().value()
        self.seal_data_primes = [
            q.value() for q in self.ctx.first_context_data().parms().coeff_modulus()
        ]
        self.seal_primes = len(self.seal_data_primes)
        self.key_primes = len(self.ctx.key_context_data().parms().coeff_modulus())
        # D/device.pk is p0 || p1 over the device's data primes, little-endian u32 residues.
        pk_len = self.path("device.pk").stat().st_size
        assert pk_len % (2 * 4 * self.n) == 0, pk_len
        self.device_primes = pk_len // (2 * 4 * self.n)
        self.expected = EXPECTED[preset]
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
        assert len(out) == self.n
        return [int(v) for v in out]

    def encrypt_here(self, values, mode, name, level=None):
        vpath = self.path(name + ".txt")
        vpath.write_text("".join(f"{v}\n" for v in values))
        out = self.path(name + ".bin")
        extra = ["--level", level] if level else []
        run("encrypt", "--dir", self.dir, "--mode", mode, "--in", vpath, "--out", out, *extra)
        return out

    def random_values(self, seed, count=None):
        return random_values(seed, self.n, self.t, count)

    def adapt(self, path, name, compress="none"):
        out = self.path(name + ".seal")
        run("adapt", "--dir", self.dir, "--in", path, "--out", out, "--compress", compress)
        return out


@pytest.fixture(scope="session", params=PRESETS)
def keys(request, tmp_path_factory):
    return Keys(tmp_path_factory.mktemp(request.param), request.param)


@pytest.fixture(scope="session", params=SEAL_PRESETS)
def seal_keys(request, tmp_path_factory):
    return Keys(tmp_path_factory.mktemp(request.param + "-only"), request.param)


def random_values(seed, n, t, count=None):
    """`count` (default n) values below t from a generator seeded by `seed`, padded with zeros
    to n slots."""
    count = n if count is None else count
    rng = random.Random(repr(seed))
    return [rng.randrange(t) for _ in range(count)] + [0] * (n - count)


@pytest.fixture
def copy_keys(tmp_path):
    """A private copy of a key directory, for tests that replace files in it."""

    def make(keys):
        new = tmp_path / "keys"
        shutil.copytree(keys.dir, new)
        return Keys(new, keys.preset, generate=False)

    return make
