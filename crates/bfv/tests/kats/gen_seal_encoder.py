"""Regenerate seal_batch_encoder.txt with Microsoft SEAL (seal-python 4.4.0).

Usage: /tmp/sealvenv/bin/python gen_seal_encoder.py > seal_batch_encoder.txt

Each case is two lines: the 4096 slot values (SEAL's 2 x 2048 matrix, row-major) and the
4096 coefficients of the plaintext polynomial SEAL's BatchEncoder makes of them.
"""
import random

import numpy

from seal import BatchEncoder, EncryptionParameters, Modulus, SEALContext, scheme_type

N, T = 4096, 65537
parms = EncryptionParameters(scheme_type.bfv)
parms.set_poly_modulus_degree(N)
parms.set_coeff_modulus([Modulus(q) for q in (134176769, 134111233, 134012929, 268369921)])
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
    [0] * 2048 + [1] + [0] * 2047,
    list(range(N)),
    [rng.randrange(T) for _ in range(N)],
]
for slots in cases:
    pt = encoder.encode(numpy.array(slots, dtype=numpy.uint64))
    assert [int(v) % T for v in encoder.decode(pt)] == slots
    print(" ".join(map(str, slots)))
    print(" ".join(map(str, coefficients(pt))))
