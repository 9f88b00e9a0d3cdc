"""Regenerate the SEAL batch-encoder files with Microsoft SEAL (seal-python 4.4.0).

Usage, from the repository root:
    .venv/bin/python crates/zeppelin/tests/kats/gen_seal_encoder.py 4096 > crates/zeppelin/tests/kats/seal_batch_encoder.txt
    .venv/bin/python crates/zeppelin/tests/kats/gen_seal_encoder.py 8192 > crates/zeppelin/tests/kats/seal_batch_encoder_8192.txt

Each case is two lines: the n slot values (SEAL's 2 x n/2 matrix, row-major) and the
n coefficients of the plaintext polynomial SEAL's BatchEncoder makes of them.
"""
import random
import sys

import numpy

from seal import BatchEncoder, EncryptionParameters, Modulus, SEALContext, scheme_type

N, T = int(sys.argv[1]) if len(sys.argv) > 1 else 4096, 65537
PRIMES = {
    4096: (134176769, 134111233, 134012929, 268369921),
    8192: (133857281, 133644289, 133611521, 133513217, 133251073, 132825089, 132759553, 268369921),
}[N]
parms = EncryptionParameters(scheme_type.bfv)
parms.set_poly_modulus_degree(N)
parms.set_coeff_modulus([Modulus(q) for q in PRIMES])
parms.set_plain_modulus(T)
encoder = BatchEncoder(SEALContext(parms))


def coefficients(pt):
    coeffs = [0] * N
    for term in pt.to_string().split(" + "):
        if "x^" in term:
            value, power = term.split("x^")
            coeffs[int(power)] = int(value, 16)
        else:
            coeffs[0] = int(term, 16)
    return coeffs


rng = random.Random(20261130)
cases = [
    [1] + [0] * (N - 1),
    [0] * (N // 2) + [1] + [0] * (N // 2 - 1),
    list(range(N)),
    [rng.randrange(T) for _ in range(N)],
]
for slots in cases:
    pt = encoder.encode(numpy.array(slots, dtype=numpy.uint64))
    assert [int(v) % T for v in encoder.decode(pt)] == slots
    print(" ".join(map(str, slots)))
    print(" ".join(map(str, coefficients(pt))))
