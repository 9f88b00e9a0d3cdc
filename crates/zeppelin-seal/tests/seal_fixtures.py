"""Writes SEAL objects made by Microsoft SEAL itself (seal-python 4.4.0) into a directory, for
the zeppelin-seal tests to read. Usage: python seal_fixtures.py OUT_DIR

Parameters are the Seal4096 preset: n = 4096, t = 65537, data primes 134176769, 134111233,
134012929, special prime 268369921.
"""

import os
import sys

import numpy
import seal

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def path(name):
    return os.path.join(out, name)


parms = seal.EncryptionParameters(seal.scheme_type.bfv)
parms.set_poly_modulus_degree(4096)
parms.set_coeff_modulus(
    [seal.Modulus(q) for q in (134176769, 134111233, 134012929, 268369921)]
)
parms.set_plain_modulus(65537)
parms.save(path("params.seal"))
ctx = seal.SEALContext(parms)
assert ctx.parameters_set(), ctx.parameter_error_message()

keygen = seal.KeyGenerator(ctx)
sk = keygen.secret_key()
sk.save(path("secret.seal"))
pk = keygen.create_public_key()
pk.save(path("public.seal"))
relin = keygen.create_relin_keys()
relin.save(path("relin.seal"))
galois = seal.GaloisKeys()
keygen.create_galois_keys([1, -3], galois)
galois.save(path("galois.seal"))

encoder = seal.BatchEncoder(ctx)
values = [(i * 7919 + 13) % 65537 for i in range(4096)]
with open(path("values.txt"), "w") as f:
    f.write("\n".join(str(v) for v in values) + "\n")
plain = encoder.encode(numpy.array(values, dtype=numpy.uint64))
plain.save(path("plain.seal"))

enc = seal.Encryptor(ctx, pk, sk)
dec = seal.Decryptor(ctx, sk)
ev = seal.Evaluator(ctx)


def save_ct(ct, name):
    ct.save(path(name + ".seal"))
    # SEAL's own decryption of it, as a coefficient-form plaintext.
    dec.decrypt(ct).save(path(name + ".plain.seal"))


save_ct(enc.encrypt_symmetric(plain), "ct_sym")
save_ct(enc.encrypt(plain), "ct_pub")
ct = enc.encrypt(plain)
save_ct(ct, "ct_top")
save_ct(ev.mod_switch_to_next(ct), "ct_level2")
save_ct(ev.mod_switch_to_next(ev.mod_switch_to_next(ct)), "ct_level1")
save_ct(ev.square(ct), "ct_size3")
