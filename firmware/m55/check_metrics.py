#!/usr/bin/env python3
"""Checks the machine-readable lines of firmware/m55/run.sh's output: every expected
`METRIC <preset> <operation> <variant> <instructions> <stack-bytes>` line and every
`RAM <image> <bytes>` line is there exactly once, with non-negative integer figures
(instructions and RAM above zero), and no METRIC/RAM line is malformed or unexpected.

    python3 firmware/m55/check_metrics.py RUN_OUTPUT.txt     # exit 0 if complete

The format and the names are documented in firmware/m55/README.md ("Machine-readable figures").
"""
import sys

PRESETS_4096 = ("seal4096", "zeppelin4096")
# The main image's client table: every operation in four keystream variants: `software`
# (every keystream byte on the core with the fastest constant-time stream: ChaCha20 on
# Helium for both streams, prng_type 0xA2), `aes_software` (software AES-CTR on both streams),
# `table_public` (table-AES public, software-AES secret) and `excluded`.
CLIENT_OPERATIONS = (
    "encode", "keygen_secret", "keygen_public", "seeded_encrypt", "encode_seeded_encrypt",
    "symmetric_encrypt", "public_encrypt", "decrypt_decode", "decrypt_seeded_decode",
)
KEYSTREAM_VARIANTS = ("software", "aes_software", "table_public", "excluded")
# Table 3: end to end with the scalar NTT and with the Helium NTT, keystream excluded.
TABLE3_OPERATIONS = (
    "encode_seeded_encrypt", "encode_symmetric_encrypt", "encode_public_encrypt",
    "decrypt_decode", "decrypt_seeded_decode",
)
TABLE3_VARIANTS = ("excluded_scalar_ntt", "excluded_helium_ntt")
NTT_OPERATIONS = ("ntt_forward", "ntt_inverse")
NTT_VARIANTS = ("portable", "mve")
# The Seal8192 image measures `software` (ChaCha20 on both streams) and
# `aes_software` (software AES-CTR on both streams).
SEAL8192_VARIANTS = ("software", "aes_software")
SEAL8192_OPERATIONS = (
    "encode", "keygen_secret", "keygen_public", "encode_seeded_encrypt",
    "encode_public_encrypt", "decrypt_decode", "decrypt_seeded_decode",
)
CLIENT_IMAGES = tuple(
    f"client_{path}_{preset}"
    for path in ("symmetric", "public")
    for preset in ("seal4096", "zeppelin4096", "seal8192")
)


def expected_metrics():
    """The (preset, operation, variant) triples run.sh must print."""
    keys = []
    for preset in PRESETS_4096:
        keys += [(preset, op, v) for op in CLIENT_OPERATIONS for v in KEYSTREAM_VARIANTS]
        keys += [(preset, op, v) for op in TABLE3_OPERATIONS for v in TABLE3_VARIANTS]
    for preset in PRESETS_4096:
        keys += [(preset, op, v) for op in NTT_OPERATIONS for v in NTT_VARIANTS]
    # No n = 8192 NTT lines: calling the transforms from the audited Seal8192 image moves its
    # inlining (and pinned audit counts); see src/bin/seal8192.rs.
    keys += [("seal8192", op, v) for op in SEAL8192_OPERATIONS for v in SEAL8192_VARIANTS]
    return keys


def is_count(text):
    return text.isdigit() and text.isascii()


def check(lines):
    """Returns (problems, metrics, ram): a list of what is wrong, and the figures read."""
    problems = []
    metrics = {}
    ram = {}
    for n, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or fields[0] not in ("METRIC", "RAM"):
            continue
        if fields[0] == "METRIC":
            if len(fields) != 6:
                problems.append(f"line {n}: METRIC needs 5 fields: {line!r}")
                continue
            key = tuple(fields[1:4])
            if not (is_count(fields[4]) and is_count(fields[5])):
                problems.append(f"line {n}: non-numeric figure: {line!r}")
                continue
            if int(fields[4]) == 0:
                problems.append(f"line {n}: zero instructions: {line!r}")
            if key in metrics:
                problems.append(f"line {n}: duplicate METRIC {' '.join(key)}")
            metrics[key] = (int(fields[4]), int(fields[5]))
        else:
            if len(fields) != 3 or not is_count(fields[2]) or int(fields[2]) == 0:
                problems.append(f"line {n}: RAM needs an image and a positive byte count: {line!r}")
                continue
            if fields[1] in ram:
                problems.append(f"line {n}: duplicate RAM {fields[1]}")
            ram[fields[1]] = int(fields[2])
    expected = expected_metrics()
    for key in expected:
        if key not in metrics:
            problems.append(f"missing METRIC {' '.join(key)}")
    for key in sorted(set(metrics) - set(expected)):
        problems.append(f"unexpected METRIC {' '.join(key)} (add it to check_metrics.py and the README)")
    for image in CLIENT_IMAGES:
        if image not in ram:
            problems.append(f"missing RAM {image}")
    for image in sorted(set(ram) - set(CLIENT_IMAGES)):
        problems.append(f"unexpected RAM {image}")
    return problems, metrics, ram


def main(argv):
    if len(argv) != 1:
        print("usage: check_metrics.py RUN_OUTPUT.txt", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8", errors="replace") as f:
        problems, metrics, ram = check(f.read().splitlines())
    for p in problems:
        print(f"METRICS FAIL {p}")
    print(f"METRICS RESULT {len(metrics)} METRIC and {len(ram)} RAM lines read, "
          f"{len(expected_metrics())} + {len(CLIENT_IMAGES)} expected, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
