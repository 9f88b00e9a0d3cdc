"""SEAL's side of tests/seal_multiply.rs (seal-python 4.4.0).

    python seal_multiply.py make DIR     # encrypt, multiply and square with SEAL
    python seal_multiply.py check DIR    # decrypt our products with SEAL

`make` reads DIR/params.seal (written by the Rust test) and DIR/adversarial.txt (names of
ciphertexts the Rust test crafted, `NAME.a.seal` / `NAME.b.seal`); for every case it writes
`NAME.a.seal`, `NAME.b.seal`, SEAL's `NAME.seal_mul.seal` = a·b and `NAME.seal_sq.seal` = a²
(compr_mode none), and for encrypted cases the expected slots `NAME.want_mul.txt` and
`NAME.want_sq.txt`; DIR/cases.txt lists `NAME LEVEL_PRIMES DECRYPTABLE`. `check` decrypts our
`NAME.ours_mul.seal` / `NAME.ours_sq.seal` of every decryptable case and compares the slots.
"""

import os
import sys

import numpy
import seal

mode, out = sys.argv[1], sys.argv[2]
NONE = seal.compr_mode_type.none


def path(name):
    return os.path.join(out, name)


parms = seal.EncryptionParameters(seal.scheme_type.bfv)
parms.load(path("params.seal"))
ctx = seal.SEALContext(parms)
assert ctx.parameters_set(), ctx.parameter_error_message()
n = parms.poly_modulus_degree()
t = parms.plain_modulus().value()
encoder = seal.BatchEncoder(ctx)


def write_slots(name, values):
    with open(path(name), "w") as f:
        f.write("\n".join(str(int(v)) for v in values) + "\n")


def read_slots(name):
    with open(path(name)) as f:
        return [int(line) for line in f]


if mode == "make":
    keygen = seal.KeyGenerator(ctx)
    sk = keygen.secret_key()
    sk.save(path("secret.seal"))
    enc = seal.Encryptor(ctx, keygen.create_public_key(), sk)
    dec = seal.Decryptor(ctx, sk)
    ev = seal.Evaluator(ctx)
    rng = numpy.random.default_rng(20261201)
    cases = []

    def level_primes(ct):
        return len(ctx.get_context_data(ct.parms_id()).parms().coeff_modulus())

    def record(name, a, b, encrypted):
        """Saves a case; it is decryptable when SEAL's own products still decrypt."""
        a.save(path(name + ".a.seal"), NONE)
        b.save(path(name + ".b.seal"), NONE)
        mul, sq = ev.multiply(a, b), ev.square(a)
        mul.save(path(name + ".seal_mul.seal"), NONE)
        sq.save(path(name + ".seal_sq.seal"), NONE)
        decryptable = encrypted and all(dec.invariant_noise_budget(c) > 0 for c in (mul, sq))
        cases.append("%s %d %d" % (name, level_primes(a), int(decryptable)))

    plains = {
        "random": rng.integers(0, t, n, dtype=numpy.uint64),
        "random2": rng.integers(0, t, n, dtype=numpy.uint64),
        "zeros": numpy.zeros(n, dtype=numpy.uint64),
        "max": numpy.full(n, t - 1, dtype=numpy.uint64),
    }
    pairs = [("random", "random2"), ("max", "max"), ("zeros", "random"), ("random", "max")]
    levels = len(parms.coeff_modulus()) - 1
    for x, y in pairs:
        a = enc.encrypt(encoder.encode(plains[x]))
        b = enc.encrypt_symmetric(encoder.encode(plains[y]))
        for down in range(levels):
            name = "%s_%s_l%d" % (x, y, levels - down)
            want_mul = (plains[x].astype(object) * plains[y].astype(object)) % t
            want_sq = (plains[x].astype(object) ** 2) % t
            write_slots(name + ".want_mul.txt", want_mul)
            write_slots(name + ".want_sq.txt", want_sq)
            record(name, a, b, True)
            if down + 1 < levels:
                a = ev.mod_switch_to_next(a)
                b = ev.mod_switch_to_next(b)
    # Larger sizes (SEAL multiplies any sizes): size 3 by 2 and 3 by 3, first level.
    a = enc.encrypt(encoder.encode(plains["random"]))
    b = enc.encrypt(encoder.encode(plains["random2"]))
    a3 = ev.square(a)
    record("size3x2", a3, b, False)
    record("size3x3", a3, ev.multiply(a, b), False)
    # The Rust test's crafted ciphertexts (extreme coefficients, no key).
    with open(path("adversarial.txt")) as f:
        for name in f.read().split():
            a = seal.Ciphertext()
            a.load(ctx, path(name + ".a.seal"))
            b = seal.Ciphertext()
            b.load(ctx, path(name + ".b.seal"))
            record(name, a, b, False)
    with open(path("cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    print("made %d cases" % len(cases))

elif mode == "check":
    sk = seal.SecretKey()
    sk.load(ctx, path("secret.seal"))
    dec = seal.Decryptor(ctx, sk)
    checked = 0
    with open(path("cases.txt")) as f:
        for line in f:
            name, _, decryptable = line.split()
            if decryptable != "1":
                continue
            for op in ("mul", "sq"):
                ct = seal.Ciphertext()
                ct.load(ctx, path("%s.ours_%s.seal" % (name, op)))
                got = [int(v) for v in encoder.decode_uint64(dec.decrypt(ct))]
                want = read_slots("%s.want_%s.txt" % (name, op))
                assert got == want, "%s %s: SEAL decrypts our product to other slots" % (name, op)
                assert dec.invariant_noise_budget(ct) > 0, name
                checked += 1
    if checked == 0:
        sys.exit("no decryptable case")
    print("SEAL decrypted %d of our products to the slot products" % checked)
else:
    sys.exit("usage: seal_multiply.py make|check DIR")
