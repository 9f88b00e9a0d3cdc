"""The package and seal-python in one process on the same keys and ciphertexts: zeppelin
encrypts, SEAL decrypts; SEAL encrypts, the Rust evaluator computes, SEAL decrypts; and the
evaluator's bytes equal SEAL's own evaluator's."""

from __future__ import annotations

import numpy as np
import pytest

import zeppelin
from conftest import assert_seal_bytes


def random_slots(rng, params, count=None):
    return rng.integers(0, params.t, size=count or params.n, dtype=np.int64)


def test_presets_and_parameters_match_the_key_directory(keys, keydir, sealkeys):
    assert set(zeppelin.presets()) == {"seal4096", "zeppelin4096", "seal8192"}
    p = zeppelin.Parameters.preset("seal4096")
    assert (p.n, p.t) == (4096, 65537)
    assert keys.parameters == p
    # The preset's SEAL parameters are byte for byte what keygen wrote to D/params.seal.
    assert p.seal_parameters() == (keydir / "params.seal").read_bytes()
    # SEAL's first data level holds the device's primes, its key level adds the special prime.
    first = [q.value() for q in sealkeys.ctx.first_context_data().parms().coeff_modulus()]
    key = [q.value() for q in sealkeys.ctx.key_context_data().parms().coeff_modulus()]
    assert tuple(first) == p.data_primes
    assert key == first + [p.special_prime]
    assert sealkeys.parms.plain_modulus().value() == p.t
    assert keys.has_secret_key and keys.has_public_key


def test_encode_decode_round_trip_and_slot_product(keys, rng):
    p = keys.parameters
    a, b = random_slots(rng, p), random_slots(rng, p)
    coeffs = p.encode(a)
    assert coeffs.dtype == np.uint32 and coeffs.shape == (p.n,)
    assert not np.array_equal(coeffs, a)  # slots are not coefficients
    assert np.array_equal(p.decode(coeffs), a)
    # Batching: the negacyclic product of the polynomials is the slot-wise product.
    ca, cb = p.encode(a).astype(object), p.encode(b).astype(object)
    full = np.convolve(ca, cb)
    prod = np.array(full[: p.n], dtype=object)
    prod[: p.n - 1] -= full[p.n :]
    prod = np.array([int(v) % p.t for v in prod], dtype=np.uint32)
    assert np.array_equal(p.decode(prod), (a * b) % p.t)


@pytest.mark.parametrize("mode", ["seeded", "symmetric", "public"])
def test_zeppelin_encrypts_seal_decrypts(keys, sealkeys, rng, mode):
    values = random_slots(rng, keys.parameters)
    ct = keys.encrypt(values, mode=mode)
    assert keys.inspect(ct) == ("device-seeded" if mode == "seeded" else "device-full", 3)
    seal_bytes = keys.to_seal(ct)
    assert keys.inspect(seal_bytes)[0] in ("seal", "device-full")
    assert np.array_equal(sealkeys.decrypt(sealkeys.load(seal_bytes)), values)
    # And the device's decryption reads both forms.
    assert np.array_equal(keys.decrypt(ct), values)
    assert np.array_equal(keys.decrypt(seal_bytes), values)


def test_fewer_slots_and_lower_levels(keys, sealkeys):
    ct = keys.encrypt([1, 2, 3], mode="symmetric", level=2)
    assert keys.inspect(ct) == ("device-full", 2)
    out = sealkeys.decrypt(sealkeys.load(keys.to_seal(ct)))
    assert list(out[:4]) == [1, 2, 3, 0] and not out[3:].any()


def test_device_and_seal_forms_convert_byte_for_byte(keys, sealkeys, rng):
    values = random_slots(rng, keys.parameters)
    # A full device ciphertext of seal4096 is an uncompressed SEAL Ciphertext: adapt is the
    # identity on it, and SEAL's own serialization of what it loaded is the same bytes.
    full = keys.encrypt(values, mode="symmetric")
    seal_bytes = keys.to_seal(full)
    assert seal_bytes == full
    assert_seal_bytes(seal_bytes, sealkeys.load(seal_bytes), "reloaded")
    assert keys.to_device(seal_bytes) == full
    # A SEAL-made ciphertext comes back to the device form and decrypts there.
    seal_ct = sealkeys.encrypt(values)
    device = keys.to_device(bytes(seal_ct.to_string()))
    assert keys.inspect(device) == ("device-full", 3)
    assert np.array_equal(keys.decrypt(device), values)
    # Compressed SEAL bytes (which seal-python 4.4.0 was built without) read back here.
    for compression, mode in (("zlib", 1), ("zstd", 2)):
        packed = keys.to_seal(keys.encrypt(values), compression=compression)
        assert packed[5] == mode  # SEALHeader's compr_mode
        assert keys.inspect(packed) == ("seal", 3)
        assert np.array_equal(keys.decrypt(packed), values)


def test_seal_encrypts_our_evaluator_seal_decrypts_byte_for_byte(keys, sealkeys, rng):
    p = keys.parameters
    t = p.t
    x, y, w = (random_slots(rng, p) for _ in range(3))
    cx, cy = sealkeys.encrypt(x), sealkeys.encrypt(y)
    bx, by = bytes(cx.to_string()), bytes(cy.to_string())
    ev = keys.evaluator()
    assert ev.has_relin_keys and ev.has_galois_keys
    se = sealkeys.evaluator

    def same(ours: bytes, theirs, expected):
        assert_seal_bytes(ours, theirs)
        assert np.array_equal(sealkeys.decrypt(sealkeys.load(ours)), np.asarray(expected) % t)

    same(ev.add(bx, by), se.add(cx, cy), x + y)
    same(ev.sub(bx, by), se.sub(cx, cy), x - y)
    same(ev.negate(bx), se.negate(cx), -x)
    product = ev.multiply(bx, by)
    seal_product = se.multiply(cx, cy)
    assert_seal_bytes(product, seal_product, "multiply")
    same(ev.relinearize(product), se.relinearize(seal_product, sealkeys.relin), x * y)
    same(ev.square(bx), se.square(cx), x * x)
    plain = sealkeys.encoder.encode(w.astype(np.uint64))
    same(ev.multiply_plain(bx, w), se.multiply_plain(cx, plain), x * w)
    same(ev.add_plain(bx, w), se.add_plain(cx, plain), x + w)
    same(ev.sub_plain(bx, w), se.sub_plain(cx, plain), x - w)
    rows = p.n // 2
    rotated = np.concatenate([np.roll(x[:rows], -3), np.roll(x[rows:], -3)])
    same(ev.rotate_rows(bx, 3), se.rotate_rows(cx, 3, sealkeys.galois), rotated)
    same(ev.rotate_columns(bx), se.rotate_columns(cx, sealkeys.galois), np.concatenate([x[rows:], x[:rows]]))
    same(ev.mod_switch_to_next(bx), se.mod_switch_to_next(cx), x)
    many = [sealkeys.encrypt(v) for v in (x, y, w)]
    same(ev.sum([bytes(c.to_string()) for c in many]), se.add_many(many), x + y + w)


def test_device_ciphertexts_through_the_evaluator(keys, sealkeys, rng):
    p = keys.parameters
    x, y = random_slots(rng, p), random_slots(rng, p)
    ev = keys.evaluator()
    cx, cy = keys.to_seal(keys.encrypt(x)), keys.to_seal(keys.encrypt(y, mode="public"))
    out = ev.relinearize(ev.multiply(cx, cy))
    expected = (x * y) % p.t
    assert np.array_equal(sealkeys.decrypt(sealkeys.load(out)), expected)
    assert np.array_equal(keys.decrypt(out), expected)


def test_evaluator_from_key_bytes(keydir, keys, sealkeys, rng):
    ev = zeppelin.Evaluator(
        "seal4096",
        relin_keys=(keydir / "relin.seal").read_bytes(),
        galois_keys=(keydir / "galois.seal").read_bytes(),
    )
    assert ev.preset == "seal4096" and ev.has_relin_keys and ev.has_galois_keys
    x = random_slots(rng, keys.parameters)
    cx = sealkeys.encrypt(x)
    ours = ev.rotate_rows(bytes(cx.to_string()), -1)
    assert_seal_bytes(ours, sealkeys.evaluator.rotate_rows(cx, -1, sealkeys.galois), "rotate_rows")


def test_errors_are_zeppelin_errors_with_clear_messages(tmp_path, keys, keydir):
    for cls in (
        zeppelin.InputError,
        zeppelin.KeyDirectoryError,
        zeppelin.CiphertextError,
        zeppelin.EvaluationError,
        zeppelin.ServiceError,
        zeppelin.EvalmultError,
    ):
        assert issubclass(cls, zeppelin.ZeppelinError) and issubclass(cls, Exception)
    with pytest.raises(zeppelin.InputError, match="unknown preset"):
        zeppelin.Parameters.preset("seal4097")
    with pytest.raises(zeppelin.InputError, match="unknown encryption mode"):
        keys.encrypt([1], mode="fast")
    with pytest.raises(zeppelin.InputError):
        keys.encrypt([65537])  # not below t
    with pytest.raises(zeppelin.InputError, match="integers"):
        keys.encrypt([0.5])
    with pytest.raises(zeppelin.InputError, match="2\\^32"):
        keys.encrypt([-1])
    with pytest.raises(zeppelin.InputError):
        keys.encrypt(np.zeros(4097, dtype=np.uint32))
    with pytest.raises(zeppelin.InputError, match="level"):
        keys.encrypt([1], level=4)
    with pytest.raises(zeppelin.CiphertextError):
        keys.decrypt(b"\x00" * 100)
    with pytest.raises(zeppelin.CiphertextError, match="larger than any"):
        keys.decrypt(b"\x00" * 10_000_000)
    with pytest.raises(zeppelin.KeyDirectoryError):
        zeppelin.KeyDirectory(tmp_path / "missing")
    with pytest.raises(zeppelin.KeyDirectoryError):
        zeppelin.keygen(keydir, preset="seal4096")  # exists, no force
    bare = zeppelin.Evaluator("seal4096")
    ct = keys.to_seal(keys.encrypt([1, 2]))
    with pytest.raises(zeppelin.EvaluationError, match="no RelinKeys"):
        bare.relinearize(bare.multiply(ct, ct))
    with pytest.raises(zeppelin.EvaluationError, match="no GaloisKeys"):
        bare.rotate_rows(ct, 1)
    with pytest.raises(zeppelin.InputError, match="sum of no"):
        bare.sum([])
    with pytest.raises(zeppelin.CiphertextError):
        bare.add(ct, ct[:-1])


def test_server_copy_without_secret_key(tmp_path, keydir, rng):
    # A server's key directory: the public parts only.
    server = tmp_path / "server"
    server.mkdir()
    for name in ("preset", "params.seal", "public.seal", "relin.seal", "galois.seal"):
        (server / name).write_bytes((keydir / name).read_bytes())
    copy = zeppelin.KeyDirectory(server)
    assert not copy.has_secret_key and copy.has_public_key
    values = random_slots(rng, copy.parameters)
    ct = copy.encrypt(values, mode="public")
    with pytest.raises(zeppelin.KeyDirectoryError, match="device.sk"):
        copy.encrypt(values, mode="seeded")
    with pytest.raises(zeppelin.KeyDirectoryError, match="device.sk"):
        copy.decrypt(ct)
    assert np.array_equal(zeppelin.KeyDirectory(keydir).decrypt(ct), values)
