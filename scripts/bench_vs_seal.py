#!/usr/bin/env python3
"""Zeppelin's device code beside Microsoft SEAL 4.1 on this host, in the same run.

Runs `zeppelin bench --json` (binary from $ZEPPELIN_BIN, default target/release/zeppelin),
then times SEAL (seal-python 4.4.0) doing the same operations with the identical parameters:
DIR/params.seal of a fresh `zeppelin keygen --preset seal4096` directory (n = 4096,
t = 65537, SEAL's three 27-bit data primes and its 28-bit special prime), with the same
secret and public key. Both sides report the median of the same number of runs; SEAL's
calls are timed one by one with time.perf_counter, so they include the Python binding's
call overhead, which is measured and printed too.

Usage: bench_vs_seal.py [--runs R]   (default 101)
"""

import argparse
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy
import seal

ROOT = Path(__file__).resolve().parents[1]
BIN = os.environ.get("ZEPPELIN_BIN", str(ROOT / "target" / "release" / "zeppelin"))
N, T = 4096, 65537


def zeppelin(*args):
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench_vs_seal: zeppelin {' '.join(map(str, args))} failed: {proc.stderr.strip()}")
    return proc.stdout


def median_us(runs, op):
    """Median of `runs` timed calls of `op` in microseconds, after one untimed warm-up call."""
    op()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        op()
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return times[runs // 2]


def seal_medians(keydir, runs, slots):
    parms = seal.EncryptionParameters(seal.scheme_type.bfv)
    parms.load(str(keydir / "params.seal"))
    primes = [m.value() for m in parms.coeff_modulus()]
    ctx = seal.SEALContext(parms)
    sk = seal.SecretKey()
    sk.load(ctx, str(keydir / "secret.seal"))
    pk = seal.PublicKey()
    pk.load(ctx, str(keydir / "public.seal"))
    encoder = seal.BatchEncoder(ctx)
    encryptor = seal.Encryptor(ctx, pk)
    encryptor.set_secret_key(sk)
    decryptor = seal.Decryptor(ctx, sk)

    ct = encryptor.encrypt(encoder.encode(slots))
    if not numpy.array_equal(encoder.decode_uint64(decryptor.decrypt(ct)), slots):
        sys.exit("bench_vs_seal: SEAL does not decrypt its own ciphertext under the device key")

    # SEAL's own seeded form (Blake2xb seed of c1), written by `zeppelin encrypt --mode
    # seal-blake2xb`; SEAL's Ciphertext.load expands the seed, the counterpart of `adapt`.
    seeded = (keydir / "seal-seeded.ct").read_bytes()
    loaded = seal.Ciphertext()

    def keygen():
        generator = seal.KeyGenerator(ctx)
        generator.create_public_key()

    medians = {
        "encode_symmetric_encrypt": median_us(
            runs, lambda: encryptor.encrypt_symmetric(encoder.encode(slots))),
        "encode_public_encrypt": median_us(runs, lambda: encryptor.encrypt(encoder.encode(slots))),
        "decrypt_decode": median_us(runs, lambda: encoder.decode_uint64(decryptor.decrypt(ct))),
        "keygen_secret_public": median_us(runs, keygen),
        "expand_seed": median_us(runs, lambda: loaded.load_bytes(ctx, seeded)),
    }
    # A trivial binding call: what one Python -> C++ round trip plus the timer costs here.
    overhead = median_us(runs, encoder.slot_count)
    return primes, medians, overhead


SEAL_OP = {
    "encode_seeded_encrypt": "n/a: binding has no Serializable (encrypt_symmetric(...).save)",
    "encode_symmetric_encrypt": "BatchEncoder.encode + Encryptor.encrypt_symmetric",
    "encode_public_encrypt": "BatchEncoder.encode + Encryptor.encrypt",
    "decrypt_decode": "Decryptor.decrypt + BatchEncoder.decode_uint64",
    "keygen_secret_public": "KeyGenerator(ctx) + create_public_key",
    "expand_seed": "Ciphertext.load_bytes of SEAL's seeded form (Blake2xb)",
}

LABEL = {
    "encode_seeded_encrypt": "encode + seeded encrypt",
    "encode_symmetric_encrypt": "encode + symmetric encrypt",
    "encode_public_encrypt": "encode + public-key encrypt",
    "decrypt_decode": "decrypt + decode",
    "keygen_secret_public": "keygen (secret + public)",
    "expand_seed": "expand seed (adapt)",
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=101, help="timed runs per operation")
    args = parser.parse_args()
    if args.runs < 1:
        sys.exit("bench_vs_seal: --runs must be at least 1")

    work = Path(tempfile.mkdtemp(prefix="zeppelin-bench-"))
    try:
        keydir = work / "keys"
        zeppelin("keygen", "--dir", keydir, "--preset", "seal4096")
        rng = numpy.random.default_rng()
        slots = rng.integers(0, T, N, dtype=numpy.uint64)
        (work / "slots.txt").write_text("\n".join(map(str, slots)) + "\n")
        zeppelin("encrypt", "--dir", keydir, "--mode", "seal-blake2xb",
                 "--in", work / "slots.txt", "--out", keydir / "seal-seeded.ct")

        ours = json.loads(zeppelin("bench", "--preset", "seal4096", "--runs", args.runs, "--json"))
        primes, theirs, overhead = seal_medians(keydir, args.runs, slots)
    finally:
        # The directory holds a secret key: it does not outlive the run.
        shutil.rmtree(work, ignore_errors=True)

    cores = os.cpu_count()
    print(f"Zeppelin (Rust, in-process `zeppelin bench`) vs Microsoft SEAL 4.1 via seal-python "
          f"{importlib.metadata.version('seal-python')}, same run, same host "
          f"({cores} cores, shared with other work)")
    print(f"parameters: n = {N}, t = {T}, coeff_modulus {primes} "
          f"(identical params.seal on both sides)")
    print(f"medians of {ours['runs']} runs each, fresh randomness per run; the SEAL column is "
          f"timed from Python, so each figure includes the binding's call overhead")
    print(f"  (a trivial binding call, BatchEncoder.slot_count, timed the same way: "
          f"{overhead:.2f} µs median; encode/decode also convert a 4096-entry numpy array)")
    print("ratio = SEAL / zeppelin (above 1: zeppelin faster)\n")

    header = f"{'operation':<30} | {'zeppelin (µs)':>13} | {'SEAL 4.1 via seal-python (µs)':>29} | {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for key, label in LABEL.items():
        z = ours["operations"][key]
        s = theirs.get(key)
        seal_cell = f"{s:.1f}" if s is not None else "n/a"
        ratio = f"{s / z:.2f}" if s is not None else "n/a"
        print(f"{label:<30} | {z:>13.1f} | {seal_cell:>29} | {ratio:>6}")
    print("\nSEAL side of each row:")
    for key, label in LABEL.items():
        print(f"  {label:<28} {SEAL_OP[key]}")
    print("zeppelin side: encode + encrypt_{seeded,symmetric,public}_with, decrypt + decode, "
          "generate_secret_key + generate_public_key, and for `expand seed` the seeded wire form "
          "parsed and c1 expanded from its AES-CTR seed (as `adapt` does before writing SEAL's form)")


if __name__ == "__main__":
    main()
