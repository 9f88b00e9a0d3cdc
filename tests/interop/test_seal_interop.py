"""Interoperability of the `zeppelin` binary with Microsoft SEAL (seal-python 4.4.0).

(a) ciphertexts made here (seeded, symmetric, public key), adapted, decrypt in SEAL;
(b) SEAL's symmetric and public-key ciphertexts decrypt here, at every level;
(c) SEAL adds, multiplies, relinearizes, rotates rows and columns and mod-switches adapted
    ciphertexts, with keys from `zeppelin keys` and from SEAL's own KeyGenerator over the
    exported secret key, and the results decrypt here;
(d) encryption here under a SEAL-generated PublicKey decrypts in SEAL;
(e) ciphertexts written here in SEAL's own seeded form (blake2xb, shake256) load and decrypt in
    SEAL, so our expansion of SEAL's generators equals SEAL's.
Also: the seeded device form is at most 51 % of the full ciphertext, every compression
decrypts here, bad input gets a non-zero exit with one error line, and SEAL ciphertexts that
do not fit the device preset (other primes, size 3, other parameters in DIR) are refused, not
decrypted to garbage.

Every test runs for every preset it applies to (`keys`: all of conftest.PRESETS; `seal_keys`:
the presets whose SEAL parameters are their own, conftest.SEAL_PRESETS). The ring degree, the
prime counts and the sizes are the key directory's and conftest.EXPECTED's, never constants.
"""

import subprocess

import numpy
import pytest
import seal

from conftest import (
    PRESETS,
    SEAL_PRESETS,
    full_len,
    kswitch_len,
    seeded_len,
    run,
    zeppelin_bin,
)

MODES = ["seeded", "symmetric", "public"]
# Every device form the adapter expands: MODES and the ChaCha20 public stream.
DEVICE_MODES = MODES + ["seeded-chacha20"]


# ----- (a) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", DEVICE_MODES)
def test_a_device_ciphertexts_adapt_and_decrypt_in_seal(keys, mode):
    values = keys.random_values(("a", keys.preset, mode))
    ct_bin = keys.encrypt_here(values, mode, f"a_{mode}")
    ct_seal = keys.adapt(ct_bin, f"a_{mode}")
    ct = keys.load_ct(ct_seal)
    assert ct.size() == 2
    # SEAL's first data level (3 primes for both 4096 presets, 7 for seal8192).
    assert ct.coeff_modulus_size() == keys.seal_primes == keys.expected["seal_primes"]
    assert keys.seal_decrypt(ct) == values
    # The adapted file is a plain SEAL 4.1 ciphertext without compression.
    raw = ct_seal.read_bytes()
    assert raw[:6] == bytes([0x5E, 0xA1, 0x10, 4, 1, 0])
    assert len(raw) == keys.expected["adapted"] == full_len(keys.seal_primes, keys.n)


def test_a_chacha20_seeded_form_names_its_generator(keys):
    # The same seeded layout as the AES one, with prng_type 0xA2 (SEAL refuses both types
    # itself; `zeppelin adapt` expands them, as test_a checks through SEAL's decryptor).
    values = keys.random_values(("a", keys.preset, "chacha20-type"))
    raw = keys.encrypt_here(values, "seeded-chacha20", "a_chacha_type").read_bytes()
    aes = keys.encrypt_here(values, "seeded", "a_aes_type").read_bytes()
    assert len(raw) == len(aes) == keys.expected["seeded"]
    assert raw[-81 + 16] == 0xA2 and aes[-81 + 16] == 0xA1


def test_a_short_value_files_fill_missing_slots_with_zero(keys):
    values = [65536, 0, 1, 12345]
    ct = keys.load_ct(keys.adapt(keys.encrypt_here(values, "seeded", "a_short"), "a_short"))
    assert keys.seal_decrypt(ct) == values + [0] * (keys.n - 4)


def test_expected_sizes_follow_the_layout(keys):
    # The key directory is the preset's, and conftest.EXPECTED's exact figures are the SEAL
    # Ciphertext / KSwitchKeys layout over the counts read from it.
    want = keys.expected
    assert (keys.n, keys.t) == (want["n"], 65537)
    assert keys.device_primes == want["device_primes"]
    assert keys.seal_primes == want["seal_primes"]
    assert keys.key_primes == want["key_primes"] == keys.seal_primes + 1
    assert want["seeded"] == seeded_len(keys.device_primes, keys.n)
    assert want["full"] == full_len(keys.device_primes, keys.n)
    assert want["adapted"] == full_len(keys.seal_primes, keys.n)
    assert want["seal_seeded"] == seeded_len(keys.seal_primes, keys.n)
    # One relinearization key per SEAL data prime, each at the key level.
    assert want["relin"] == kswitch_len(keys.seal_primes, keys.key_primes, keys.n, False)
    assert want["relin_seeded"] == kswitch_len(keys.seal_primes, keys.key_primes, keys.n, True)
    # SEAL's own PublicKey in D is a ciphertext at the key level.
    assert keys.path("public.seal").stat().st_size == full_len(keys.key_primes, keys.n)


def test_seeded_device_form_is_at_most_51_percent_of_the_full_ciphertext(keys):
    # Against the full ciphertext over the same primes (the device's full form is SEAL's
    # Ciphertext layout; for the SEAL presets it is also exactly the adapted SEAL ciphertext's
    # size).
    values = keys.random_values("size")
    seeded = keys.encrypt_here(values, "seeded", "size_seeded").read_bytes()
    full = keys.encrypt_here(values, "symmetric", "size_sym").read_bytes()
    assert len(seeded) <= 0.51 * len(full), (len(seeded), len(full))
    adapted = keys.adapt(keys.path("size_seeded.bin"), "size_full").read_bytes()
    want = keys.expected
    assert (len(seeded), len(full), len(adapted)) == (
        want["seeded"],
        want["full"],
        want["adapted"],
    )
    if keys.preset in SEAL_PRESETS:
        assert len(adapted) == len(full)


# ----- (b) ---------------------------------------------------------------------------------


def all_levels(keys, ct):
    """The ciphertext at each of SEAL's data levels: seal_primes, ..., 2, 1 primes."""
    out = [ct]
    while out[-1].coeff_modulus_size() > 1:
        out.append(keys.evaluator.mod_switch_to_next(out[-1]))
    return out


def test_b_seal_ciphertexts_decrypt_here_at_every_level(keys):
    values = keys.random_values(("b", keys.preset))
    plain = keys.encode(values)
    seal_pk = seal.KeyGenerator(keys.ctx, keys.sk).create_public_key()
    sources = {
        "symmetric": seal.Encryptor(keys.ctx, keys.pk, keys.sk).encrypt_symmetric(plain),
        "public": seal.Encryptor(keys.ctx, keys.pk).encrypt(plain),
        "seal_public": seal.Encryptor(keys.ctx, seal_pk).encrypt(plain),
    }
    for name, ct in sources.items():
        for ct_level in all_levels(keys, ct):
            level = ct_level.coeff_modulus_size()
            path = keys.save_ct(ct_level, f"b_{name}_{level}.seal")
            assert keys.zeppelin_decrypt(path) == values, (name, level)
        assert level == 1


# ----- (c) ---------------------------------------------------------------------------------


def rotate_rows(values, steps):
    half = len(values) // 2
    rows = [values[:half], values[half:]]
    return [r[(i + steps) % half] for r in rows for i in range(half)]


def rotate_columns(values):
    half = len(values) // 2
    return values[half:] + values[:half]


def seal_keys_from(keys, source):
    if source.startswith("zeppelin"):
        seeded = ["--seeded"] if source == "zeppelin-seeded" else []
        # The fixture directory is shared by the sources: each run replaces the keys.
        run("keys", "--dir", keys.dir, "--relin", "--galois", "--force", *seeded)
        size = keys.path("relin.seal").stat().st_size
        assert size == keys.expected["relin_seeded" if seeded else "relin"], size
        relin = seal.RelinKeys()
        relin.load(keys.ctx, str(keys.path("relin.seal")))
        galois = seal.GaloisKeys()
        galois.load(keys.ctx, str(keys.path("galois.seal")))
    else:
        generator = seal.KeyGenerator(keys.ctx, keys.sk)
        relin = generator.create_relin_keys()
        galois = generator.create_galois_keys()
    return relin, galois


@pytest.mark.parametrize("source", ["zeppelin", "zeppelin-seeded", "seal"])
def test_c_seal_evaluates_adapted_ciphertexts(keys, source):
    relin, galois = seal_keys_from(keys, source)
    ev = keys.evaluator
    T = keys.t
    x = keys.random_values(("c-x", keys.preset, source))
    y = keys.random_values(("c-y", keys.preset, source))
    cx = keys.load_ct(keys.adapt(keys.encrypt_here(x, "seeded", "c_x"), "c_x"))
    cy = keys.load_ct(keys.adapt(keys.encrypt_here(y, "public", "c_y"), "c_y"))

    results = {
        "add": (ev.add(cx, cy), [(a + b) % T for a, b in zip(x, y)]),
        "sub": (ev.sub(cx, cy), [(a - b) % T for a, b in zip(x, y)]),
        "mul_plain": (
            ev.multiply_plain(cx, keys.encode(y)),
            [(a * b) % T for a, b in zip(x, y)],
        ),
        "mul_relin": (
            ev.relinearize(ev.multiply(cx, cy), relin),
            [(a * b) % T for a, b in zip(x, y)],
        ),
        "rotate_rows_1": (ev.rotate_rows(cx, 1, galois), rotate_rows(x, 1)),
        "rotate_rows_-1": (ev.rotate_rows(cx, -1, galois), rotate_rows(x, -1)),
        "rotate_rows_5": (ev.rotate_rows(cx, 5, galois), rotate_rows(x, 5)),
        "rotate_columns": (ev.rotate_columns(cx, galois), rotate_columns(x)),
    }
    squared = ev.relinearize(ev.multiply(cx, cx), relin)
    results["square_mod_switch"] = (
        ev.mod_switch_to_next(squared),
        [(a * a) % T for a in x],
    )
    results["mod_switch_twice"] = (
        ev.mod_switch_to_next(ev.mod_switch_to_next(cy)),
        y,
    )
    for name, (ct, want) in results.items():
        assert keys.decryptor.invariant_noise_budget(ct) > 0, name
        assert keys.seal_decrypt(ct) == want, f"SEAL itself disagrees on {name}"
        path = keys.save_ct(ct, f"c_{source}_{name}.seal")
        assert keys.zeppelin_decrypt(path) == want, name


# ----- (d) ---------------------------------------------------------------------------------


def test_d_encryption_here_under_a_seal_generated_public_key(seal_keys, copy_keys):
    # SEAL's own KeyGenerator makes the public key from the exported secret key; `zeppelin
    # encrypt --mode public` reads DIR/public.seal (for the SEAL presets, seal4096 and seal8192).
    keys = copy_keys(seal_keys)
    seal.KeyGenerator(keys.ctx, keys.sk).create_public_key().save(str(keys.path("public.seal")))
    values = keys.random_values("d")
    ct = keys.load_ct(keys.adapt(keys.encrypt_here(values, "public", "d"), "d"))
    assert keys.seal_decrypt(ct) == values
    # The device's full public-key form at SEAL's level is itself a SEAL ciphertext.
    assert keys.seal_decrypt(keys.load_ct(keys.path("d.bin"))) == values


# ----- (e) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("prng,type_byte", [("blake2xb", 1), ("shake256", 2)])
def test_e_seals_own_seeded_form_loads_and_decrypts_in_seal(keys, prng, type_byte):
    values = keys.random_values(("e", keys.preset, prng))
    path = keys.encrypt_here(values, f"seal-{prng}", f"e_{prng}")
    raw = path.read_bytes()
    # c0 only, then UniformRandomGeneratorInfo: header (size 81), prng_type, 64-byte seed; at
    # SEAL's first data level (98,498 bytes for both 4096 presets, 458,946 for seal8192).
    assert len(raw) == keys.expected["seal_seeded"] == seeded_len(keys.seal_primes, keys.n)
    info = raw[-81:]
    assert info[:6] == bytes([0x5E, 0xA1, 0x10, 4, 1, 0])
    assert int.from_bytes(info[8:16], "little") == 81
    assert info[16] == type_byte
    ct = keys.load_ct(path)  # SEAL expands c1 with its own generator here
    assert keys.seal_decrypt(ct) == values
    assert keys.zeppelin_decrypt(path) == values


# ----- any compression, any level, errors ---------------------------------------------------


@pytest.mark.parametrize("compress", ["none", "zlib", "zstd"])
def test_every_compression_decrypts_here(keys, compress):
    values = keys.random_values(("z", keys.preset))
    bin_path = keys.encrypt_here(values, "symmetric", "z")
    path = keys.adapt(bin_path, f"z_{compress}", compress=compress)
    assert path.read_bytes()[5] == {"none": 0, "zlib": 1, "zstd": 2}[compress]
    assert keys.zeppelin_decrypt(path) == values


@pytest.mark.parametrize("level", [1, 2])
def test_device_ciphertexts_below_the_full_level(keys, level):
    values = keys.random_values(("lv", keys.preset, level))
    # One 27-bit prime leaves no room for public-key noise (about sqrt(n) times larger).
    for mode in MODES if level > 1 else ["seeded", "symmetric"]:
        path = keys.encrypt_here(values, mode, f"lv_{mode}_{level}", level=level)
        assert keys.zeppelin_decrypt(path) == values, mode
        ct = keys.load_ct(keys.adapt(path, f"lv_{mode}_{level}"))
        assert ct.coeff_modulus_size() == level
        assert keys.seal_decrypt(ct) == values, mode


def test_bad_input_gets_one_error_line_and_nonzero_exit(seal_keys, tmp_path):
    keys = seal_keys
    d = keys.dir
    bad_values = tmp_path / "bad.txt"
    bad_values.write_text(f"1\n{keys.t}\n")
    run("encrypt", "--dir", d, "--mode", "seeded", "--in", bad_values, "--out", tmp_path / "x", ok=False)
    bad_values.write_text("abc\n")
    run("encrypt", "--dir", d, "--mode", "seeded", "--in", bad_values, "--out", tmp_path / "x", ok=False)
    bad_values.write_text("1\n" * (keys.n + 1))
    run("encrypt", "--dir", d, "--mode", "seeded", "--in", bad_values, "--out", tmp_path / "x", ok=False)

    good = keys.encrypt_here(keys.random_values("err"), "seeded", "err").read_bytes()
    full = keys.adapt(keys.path("err.bin"), "err").read_bytes()
    cases = {
        "truncated_seeded": good[:-10],
        "truncated_full": full[: len(full) // 2],
        "bad_magic": b"\x00" + full[1:],
        "unknown_parms_id": full[:20] + bytes([full[20] ^ 1]) + full[21:],
        "coefficient_too_large": full[:113] + (2**40).to_bytes(8, "little") + full[121:],
        "empty": b"",
        "garbage": b"hello world",
    }
    for name, data in cases.items():
        f = tmp_path / f"{name}.bin"
        f.write_bytes(data)
        proc = run("decrypt", "--dir", d, "--in", f, ok=False)
        assert proc.stdout == "", name
        run("adapt", "--dir", d, "--in", f, "--out", tmp_path / "o.seal", ok=False)
    run("decrypt", "--dir", tmp_path / "missing", "--in", keys.path("err.bin"), ok=False)
    run("keys", "--dir", d, ok=False)
    # Usage errors are clap's (exit 2), not crashes.
    proc = subprocess.run([zeppelin_bin(), "encrypt", "--dir", str(d)], capture_output=True)
    assert proc.returncode == 2


def seal_context(n, t, primes):
    parms = seal.EncryptionParameters(seal.scheme_type.bfv)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus([seal.Modulus(q) for q in primes])
    parms.set_plain_modulus(t)
    ctx = seal.SEALContext(parms)
    assert ctx.parameters_set(), ctx.parameter_error_message()
    return parms, ctx


def is_prime(q):
    if q < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if q % p == 0:
            return q == p
    d, r = q - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):  # deterministic below 3.3e24
        x = pow(a, d, q)
        if x in (1, q - 1):
            continue
        for _ in range(r - 1):
            x = x * x % q
            if x == q - 1:
                break
        else:
            return False
    return True


def next_ntt_prime_below(q, n, avoid):
    """The largest prime below q that is 1 mod 2n (NTT-friendly for degree n), not in avoid."""
    c = q - 1 - (q - 1) % (2 * n) + 1
    if c >= q:
        c -= 2 * n
    while not is_prime(c) or c in avoid:
        c -= 2 * n
    return c


def test_seal_ciphertexts_that_do_not_fit_the_preset_are_refused(seal_keys, copy_keys, tmp_path):
    keys = seal_keys
    primes = [q.value() for q in keys.parms.coeff_modulus()]
    data = keys.seal_data_primes
    assert primes[:-1] == data
    # Same degree, same level, same plain modulus: only the last data prime differs, replaced
    # by the next NTT-friendly prime below the data primes (for seal4096 the third,
    # 134012929 -> 133963777, zeppelin4096's fourth prime; for seal8192 the seventh,
    # 132759553 -> 132710401).
    replacement = next_ntt_prime_below(min(data), keys.n, set(primes))
    assert replacement == {"seal4096": 133963777, "seal8192": 132710401}[keys.preset]
    other = data[:-1] + [replacement] + primes[-1:]
    parms, ctx = seal_context(keys.n, keys.t, other)
    encoder = seal.BatchEncoder(ctx)
    sk = seal.KeyGenerator(ctx).secret_key()
    plain = encoder.encode(numpy.array(keys.random_values("other"), dtype=numpy.uint64))
    ct = seal.Encryptor(ctx, sk).encrypt_symmetric(plain)
    assert ct.coeff_modulus_size() == len(data)
    path = tmp_path / "other_primes.seal"
    ct.save(str(path))
    proc = run("decrypt", "--dir", keys.dir, "--in", path, ok=False)
    assert proc.stdout == ""
    assert "unknown parms_id" in proc.stderr, proc.stderr

    # A product of two ciphertexts (size 3) must be relinearized first.
    values = keys.random_values("size3")
    mine = keys.load_ct(keys.adapt(keys.encrypt_here(values, "symmetric", "size3"), "size3"))
    product = keys.evaluator.multiply(mine, mine)
    assert product.size() == 3
    proc = run("decrypt", "--dir", keys.dir, "--in", keys.save_ct(product, "size3_ct.seal"), ok=False)
    assert f"does not fit the device preset {keys.preset}" in proc.stderr, proc.stderr
    assert "relinearize first" in proc.stderr, proc.stderr

    # A key directory whose params.seal is not the preset's SEAL parameters.
    changed = copy_keys(keys)
    parms.save(str(changed.path("params.seal")))
    proc = run("decrypt", "--dir", changed.dir, "--in", keys.path("size3.bin"), ok=False)
    assert f"EncryptionParameters does not fit the device preset {keys.preset}" in proc.stderr, (
        proc.stderr
    )
    run("adapt", "--dir", changed.dir, "--in", keys.path("size3.bin"), "--out", tmp_path / "o", ok=False)

    # adapt reads the device's forms only, not SEAL's compressed ciphertexts.
    zstd = keys.adapt(keys.path("size3.bin"), "size3_zstd", compress="zstd")
    run("adapt", "--dir", keys.dir, "--in", zstd, "--out", tmp_path / "o2", ok=False)


def test_demo_runs(tmp_path):
    out = run("demo-local", "--dir", tmp_path / "demo").stdout
    assert "slots round trip exactly: true" in out


@pytest.mark.parametrize("preset", PRESETS)
def test_demo_runs_with_each_preset(tmp_path, preset):
    out = run("demo-local", "--dir", tmp_path / "demo", "--preset", preset).stdout
    assert "slots round trip exactly: true" in out
