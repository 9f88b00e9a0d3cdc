#!/usr/bin/env python3
"""The main job, end to end: a device encrypts sensor readings, an untrusted server running
Microsoft SEAL (seal-python 4.4.0) computes on the ciphertexts with only public evaluation
keys, and the device decrypts the results. Every figure printed here is measured in this run.

Run through scripts/demo.sh, which sets up the machine and builds the `zeppelin` binary.
"""

import os
import random
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
    start = time.perf_counter()
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"demo: zeppelin {' '.join(map(str, args))} failed: {proc.stderr.strip()}")
    return proc.stdout, elapsed


def device_decrypt(keydir, path):
    out, elapsed = zeppelin("decrypt", "--dir", keydir, "--in", path)
    return [int(line) for line in out.split()], elapsed


def row_rotate(values, steps):
    half = N // 2
    rows = [values[:half], values[half:]]
    return [v for row in rows for v in row[steps % half:] + row[: steps % half]]


def main():
    random.seed(2026)
    work = Path(tempfile.mkdtemp(prefix="zeppelin-demo-"))
    keydir = work / "keys"
    print(f"Zeppelin end-to-end demo (files in {work})\n")

    # Trusted side / device provisioning.
    _, t_keygen = zeppelin("keygen", "--dir", keydir, "--preset", "seal4096")
    _, t_keys = zeppelin("keys", "--dir", keydir, "--relin", "--galois")

    # Device: 4096 sensor readings (e.g. occupancy counts 0..15), encrypted seeded.
    readings = [random.randrange(16) for _ in range(N)]
    (work / "readings.txt").write_text("\n".join(map(str, readings)) + "\n")
    _, t_enc = zeppelin("encrypt", "--dir", keydir, "--mode", "seeded",
                        "--in", work / "readings.txt", "--out", work / "ct.bin")
    _, t_adapt = zeppelin("adapt", "--dir", keydir, "--in", work / "ct.bin", "--out", work / "ct.seal")

    # Untrusted server: SEAL with public evaluation keys only (no secret key is loaded).
    parms = seal.EncryptionParameters(seal.scheme_type.bfv)
    parms.load(str(keydir / "params.seal"))
    ctx = seal.SEALContext(parms)
    relin = seal.RelinKeys()
    relin.load(ctx, str(keydir / "relin.seal"))
    galois = seal.GaloisKeys()
    galois.load(ctx, str(keydir / "galois.seal"))
    ev = seal.Evaluator(ctx)
    encoder = seal.BatchEncoder(ctx)
    x = seal.Ciphertext()
    x.load(ctx, str(work / "ct.seal"))

    start = time.perf_counter()
    # f(x) = x^2 + 3x per slot (a multiplication, relinearization and a plaintext product).
    poly = ev.square(x)
    ev.relinearize_inplace(poly, relin)
    three = encoder.encode(numpy.full(N, 3, dtype=numpy.uint64))
    ev.add_inplace(poly, ev.multiply_plain(x, three))
    ev.mod_switch_to_next_inplace(poly)
    # The total of all 4096 readings in every slot: rotate-and-add over rows, then columns.
    total = x
    step = 1
    while step < N // 2:
        total = ev.add(total, ev.rotate_rows(total, step, galois))
        step *= 2
    total = ev.add(total, ev.rotate_columns(total, galois))
    ev.mod_switch_to_next_inplace(total)
    # A moving difference: the reading next door minus this one.
    diff = ev.sub(ev.rotate_rows(x, 1, galois), x)
    t_server = time.perf_counter() - start
    for name, ct in (("poly", poly), ("total", total), ("diff", diff)):
        ct.save(str(work / f"{name}.seal"), seal.compr_mode_type.none)

    # Device: decrypt all three results (two of them at a lower level after mod switching).
    got_poly, t_dec = device_decrypt(keydir, work / "poly.seal")
    got_total, _ = device_decrypt(keydir, work / "total.seal")
    got_diff, _ = device_decrypt(keydir, work / "diff.seal")
    want_poly = [(v * v + 3 * v) % T for v in readings]
    want_total = [sum(readings) % T] * N
    want_diff = [(a - b) % T for a, b in zip(row_rotate(readings, 1), readings)]

    sizes = {
        "seeded device ciphertext": (work / "ct.bin").stat().st_size,
        "SEAL ciphertext (adapted)": (work / "ct.seal").stat().st_size,
        "result x^2+3x (1 level down)": (work / "poly.seal").stat().st_size,
        "relinearization keys": (keydir / "relin.seal").stat().st_size,
        "Galois keys": (keydir / "galois.seal").stat().st_size,
    }
    print("bytes on the wire")
    for name, size in sizes.items():
        print(f"  {name:32} {size:>12,}")
    print("\nwall-clock on this host (whole CLI processes, incl. start-up and file I/O)")
    for name, secs in (("keygen", t_keygen), ("relin + Galois keys (trusted side)", t_keys),
                       ("encode + seeded encrypt", t_enc), ("adapt to SEAL", t_adapt),
                       ("SEAL server: square, relin, rotations x13", t_server),
                       ("decrypt + decode", t_dec)):
        print(f"  {name:42} {secs * 1000:9.1f} ms")
    print("\nresults decrypted on the device")
    ok = True
    for name, got, want in (("x^2 + 3x", got_poly, want_poly), ("total", got_total, want_total),
                            ("next - this", got_diff, want_diff)):
        bad = sum(g != w for g, w in zip(got, want))
        ok &= bad == 0 and len(got) == N
        print(f"  {name:12} first slots {got[:6]}  expected {want[:6]}  mismatches {bad}/{N}")
    print(f"  sum of readings: {sum(readings)} -> device got {got_total[0]}")
    # Trusted-side check only: SEAL's own decryptor with the exported secret key reports the
    # invariant noise budget left in each ciphertext (the server above never saw this key).
    sk = seal.SecretKey()
    sk.load(ctx, str(keydir / "secret.seal"))
    decryptor = seal.Decryptor(ctx, sk)
    print("\nSEAL invariant noise budget (bits, measured by SEAL with the exported secret key)")
    for name, ct in (("fresh seeded encryption", x), ("x^2 + 3x", poly), ("total", total), ("next - this", diff)):
        print(f"  {name:24} {decryptor.invariant_noise_budget(ct):4d}")
    if not ok:
        sys.exit("demo: FAILED: a decrypted result differs from the plaintext computation")
    print("\nall 3 x 4096 slots exact")


if __name__ == "__main__":
    main()
