"""SEAL's own Evaluator results, for zeppelin-server's byte-for-byte comparison
(crates/server/tests/seal_ops.rs). Microsoft SEAL through seal-python 4.4.0.

Usage:
  python seal_ops.py generate OUT_DIR PRESET   # PRESET: seal4096 | seal8192
  python seal_ops.py decrypt OUT_DIR           # SEAL decrypts the Rust outputs (*.ours.seal)

`generate` writes SEAL's keys, inputs and outputs (compr_mode none) and a manifest, one case a
line: `name op input1 input2 keys arg checked`; `-` marks an unused field. `checked` is 1 when
SEAL's own output still decrypts to the slot values computed here with numpy (noise budget
left), so that the Rust output must decrypt to them too; the Rust test writes
`name.ours.seal` for every case and `decrypt` checks them.
"""

import os
import sys

import numpy
import seal

PRESETS = {
    "seal4096": (
        4096,
        [134176769, 134111233, 134012929, 268369921],
    ),
    "seal8192": (
        8192,
        [
            133857281, 133644289, 133611521, 133513217, 133251073, 132825089,
            132759553, 268369921,
        ],
    ),
}
T = 65537
NONE = seal.compr_mode_type.none


def slots_of(encoder, plain):
    """The slots in [0, t) (seal-python's decode returns t/2 and above as negative)."""
    return encoder.decode(plain).astype(object) % T


def context(out):
    parms = seal.EncryptionParameters(seal.scheme_type.bfv)
    parms.load(os.path.join(out, "params.seal"))
    ctx = seal.SEALContext(parms)
    assert ctx.parameters_set(), ctx.parameter_error_message()
    return ctx


def generate(out, preset):
    os.makedirs(out, exist_ok=True)
    path = lambda name: os.path.join(out, name)
    n, primes = PRESETS[preset]
    parms = seal.EncryptionParameters(seal.scheme_type.bfv)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus([seal.Modulus(q) for q in primes])
    parms.set_plain_modulus(T)
    parms.save(path("params.seal"), NONE)
    ctx = seal.SEALContext(parms)
    assert ctx.parameters_set(), ctx.parameter_error_message()
    assert ctx.first_context_data().qualifiers().using_batching

    keygen = seal.KeyGenerator(ctx)
    sk = keygen.secret_key()
    sk.save(path("secret.seal"))
    pk = keygen.create_public_key()
    relin = keygen.create_relin_keys()
    relin.save(path("relin.seal"))
    if n == 4096:
        # SEAL's default set: the column swap and every power-of-two step, both ways.
        main = keygen.create_galois_keys()
    else:
        # n = 8192: the default set would be 175 MB; a few steps instead.
        main = seal.GaloisKeys()
        keygen.create_galois_keys([1, -1, 4, 7, -7, 0], main)
    main.save(path("galois_main.seal"))
    # A few elements only: rotations by other steps go through SEAL's NAF fallback.
    few = seal.GaloisKeys()
    keygen.create_galois_keys([1, -1, 4, -4, 16, 0], few)
    few.save(path("galois_few.seal"))
    keys = {"relin": relin, "galois_main": main, "galois_few": few}

    rng = numpy.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    encoder = seal.BatchEncoder(ctx)
    enc = seal.Encryptor(ctx, pk, sk)
    dec = seal.Decryptor(ctx, sk)
    ev = seal.Evaluator(ctx)
    rows = n // 2

    def values():
        return rng.integers(0, T, size=n, dtype=numpy.uint64)

    cts = {}
    slots = {}

    def fresh(name):
        v = values()
        ct = enc.encrypt(encoder.encode(v))
        ct.save(path(name + ".seal"), NONE)
        cts[name], slots[name] = ct, v.astype(object)
        return name

    def plain_batched(name):
        v = values()
        pt = encoder.encode(v)
        pt.save(path(name + ".seal"), NONE)
        cts[name], slots[name] = pt, v.astype(object)
        return name

    def plain_poly(name, hex_poly, scalar=None):
        pt = seal.Plaintext(hex_poly)
        pt.save(path(name + ".seal"), NONE)
        cts[name] = pt
        slots[name] = None if scalar is None else numpy.full(n, scalar, dtype=object)
        return name

    manifest = []

    def case(name, op, a, b="-", key="-", arg="-", expect=None):
        x = cts[a]
        y = cts[b] if b != "-" else None
        k = keys[key] if key != "-" else None
        if op == "add":
            r = ev.add(x, y)
        elif op == "sub":
            r = ev.sub(x, y)
        elif op == "negate":
            r = ev.negate(x)
        elif op == "add_plain":
            r = ev.add_plain(x, y)
        elif op == "sub_plain":
            r = ev.sub_plain(x, y)
        elif op == "multiply_plain":
            r = ev.multiply_plain(x, y)
        elif op == "multiply":
            r = ev.multiply(x, y)
        elif op == "relinearize":
            r = ev.relinearize(x, k)
        elif op == "rotate_rows":
            r = ev.rotate_rows(x, int(arg), k)
        elif op == "rotate_columns":
            r = ev.rotate_columns(x, k)
        elif op == "mod_switch_to_next":
            r = ev.mod_switch_to_next(x)
        else:
            raise ValueError(op)
        r.save(path(name + ".seal"), NONE)
        cts[name] = r
        slots[name] = expect
        checked = 0
        if expect is not None and dec.invariant_noise_budget(r) > 0:
            got = slots_of(encoder, dec.decrypt(r))
            assert (got == expect).all(), f"SEAL's own {name} does not decrypt as expected"
            numpy.save(path(name + ".expected.npy"), numpy.array(expect, dtype=numpy.uint64))
            checked = 1
        # SEAL's products are inputs of relinearization here; multiply itself is
        # compared in the BEHZ tests.
        if op != "multiply":
            manifest.append(f"{name} {op} {a} {b} {key} {arg} {checked}")
        return name

    def rot(v, steps):
        m = v.reshape(2, rows)
        return numpy.concatenate([numpy.roll(m[0], -steps), numpy.roll(m[1], -steps)])

    def swap(v):
        m = v.reshape(2, rows)
        return numpy.concatenate([m[1], m[0]])

    def ops_at(tag, a, b, p, full):
        """The operations at one level; `full` adds those that need noise room."""
        va, vb, vp = slots[a], slots[b], slots[p]
        case(f"{tag}_add", "add", a, b, expect=(va + vb) % T)
        case(f"{tag}_sub", "sub", a, b, expect=(va - vb) % T)
        case(f"{tag}_negate", "negate", a, expect=(-va) % T)
        case(f"{tag}_add_plain", "add_plain", a, p, expect=(va + vp) % T)
        case(f"{tag}_sub_plain", "sub_plain", a, p, expect=(va - vp) % T)
        case(f"{tag}_mulp", "multiply_plain", a, p, expect=(va * vp) % T)
        # One-coefficient plaintexts: a scalar above (t+1)/2 (a negative weight), a small
        # one, and monomials v·x^e on both sides of the threshold.
        w_neg, w_pos = int(rng.integers(T // 2 + 1, T)), int(rng.integers(2, T // 2))
        s1 = plain_poly(f"{tag}_scalar_neg", f"{w_neg:X}", w_neg)
        s2 = plain_poly(f"{tag}_scalar_pos", f"{w_pos:X}", w_pos)
        m1 = plain_poly(f"{tag}_mono_neg", f"{w_neg:X}x^{int(rng.integers(1, n))}")
        m2 = plain_poly(f"{tag}_mono_pos", f"{w_pos:X}x^{int(rng.integers(1, n))}")
        case(f"{tag}_mulp_scalar_neg", "multiply_plain", a, s1, expect=(va * w_neg) % T)
        case(f"{tag}_mulp_scalar_pos", "multiply_plain", a, s2, expect=(va * w_pos) % T)
        case(f"{tag}_mulp_mono_neg", "multiply_plain", a, m1)
        case(f"{tag}_mulp_mono_pos", "multiply_plain", a, m2)
        # A sparse plaintext polynomial with a coefficient either side of (t+1)/2.
        sp = plain_poly(f"{tag}_sparse", f"{w_neg:X}x^{n - 1} + {w_pos:X}x^3 + 1")
        case(f"{tag}_mulp_sparse", "multiply_plain", a, sp)
        prod = case(f"{tag}_mul", "multiply", a, b, expect=(va * vb) % T)
        case(f"{tag}_relin", "relinearize", prod, key="relin", expect=(va * vb) % T)
        main = "galois_main"
        for s in (1, -1, 7, -7):
            case(f"{tag}_rot{s}", "rotate_rows", a, key=main, arg=s, expect=rot(va, s))
        case(f"{tag}_rotcol", "rotate_columns", a, key=main, expect=swap(va))
        # Steps without their own key in the few-element set: SEAL's NAF fallback.
        for s in (3, -3, 5, 13) if full else (3,):
            case(f"{tag}_naf{s}", "rotate_rows", a, key="galois_few", arg=s, expect=rot(va, s))

    a = fresh("a")
    b = fresh("b")
    p = plain_batched("p")
    ops_at("top", a, b, p, True)
    # Down the chain to the last level, the operations at every level below the top.
    k = len(primes) - 1
    level = 1
    while k > 1:
        a = case(f"a_ms{level}", "mod_switch_to_next", a, expect=slots[a])
        b = case(f"b_ms{level}", "mod_switch_to_next", b, expect=slots[b])
        k -= 1
        if k <= 2 or level == 1:
            ops_at(f"ms{level}", a, b, p, False)
        level += 1

    with open(path("manifest.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")


def decrypt(out):
    ctx = context(out)
    sk = seal.SecretKey()
    sk.load(ctx, os.path.join(out, "secret.seal"))
    dec = seal.Decryptor(ctx, sk)
    encoder = seal.BatchEncoder(ctx)
    checked = 0
    with open(os.path.join(out, "manifest.txt")) as f:
        for line in f:
            name, *_, flag = line.split()
            if flag != "1":
                continue
            ours = seal.Ciphertext()
            ours.load(ctx, os.path.join(out, name + ".ours.seal"))
            got = slots_of(encoder, dec.decrypt(ours))
            want = numpy.load(os.path.join(out, name + ".expected.npy")).astype(object)
            assert (got == want).all(), f"{name}: SEAL decrypts our output to other slots"
            checked += 1
    print(f"SEAL decrypted {checked} outputs to the expected slots")


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "decrypt":
        decrypt(sys.argv[2])
    else:
        raise SystemExit(__doc__)
