"""The other presets through the same package and seal-python: zeppelin4096 (four device
primes, no special prime: `to_seal` switches its ciphertexts down to SEAL's level) and
seal8192 (n = 8192)."""

from __future__ import annotations

import numpy as np
import pytest

import zeppelin
from conftest import Seal


@pytest.mark.parametrize("preset", ["zeppelin4096", "seal8192"])
def test_other_presets_encrypt_here_decrypt_in_seal(tmp_path, preset):
    keys = zeppelin.keygen(tmp_path / preset, preset=preset)
    p = keys.parameters
    assert keys.preset == preset and p == zeppelin.Parameters.preset(preset)
    sealkeys = Seal(tmp_path / preset)
    assert sealkeys.parms.poly_modulus_degree() == p.n
    rng = np.random.default_rng(p.n)
    values = rng.integers(0, p.t, size=p.n)
    levels = len(p.data_primes)
    for mode in ("seeded", "symmetric", "public"):
        ct = keys.encrypt(values, mode=mode)
        assert keys.inspect(ct)[1] == levels
        seal_bytes = keys.to_seal(ct)
        seal_ct = sealkeys.load(seal_bytes)
        first = sealkeys.ctx.first_context_data().parms().coeff_modulus()
        assert seal_ct.coeff_modulus_size() == len(first)
        assert np.array_equal(sealkeys.decrypt(seal_ct), values), mode
        assert np.array_equal(keys.decrypt(seal_bytes), values), mode
    # SEAL's ciphertexts go through the Rust evaluator and come back to SEAL.
    ev = keys.evaluator()
    cx = sealkeys.encrypt(values)
    doubled = ev.add(bytes(cx.to_string()), bytes(cx.to_string()))
    assert np.array_equal(sealkeys.decrypt(sealkeys.load(doubled)), (2 * values) % p.t)
