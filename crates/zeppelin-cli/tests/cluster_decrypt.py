"""Microsoft SEAL (seal-python 4.4.0) decrypts an aggregate the cluster returned and compares
its slots with the plaintext truth (crates/zeppelin-cli/tests/cluster_faults.rs).

Usage: python cluster_decrypt.py KEY_DIR CIPHERTEXT EXPECTED
  KEY_DIR: a `zeppelin keygen` directory (params.seal, secret.seal)
  CIPHERTEXT: the SEAL Ciphertext bytes the service answered
  EXPECTED: the expected slots mod t, whitespace-separated decimal
Prints one line and exits 0 when every slot matches; 1 with the first differences if not.
"""

import os
import sys

import seal


def main(key_dir, ciphertext, expected):
    parms = seal.EncryptionParameters(seal.scheme_type.bfv)
    parms.load(os.path.join(key_dir, "params.seal"))
    ctx = seal.SEALContext(parms)
    assert ctx.parameters_set(), ctx.parameter_error_message()
    t = parms.plain_modulus().value()
    sk = seal.SecretKey()
    sk.load(ctx, os.path.join(key_dir, "secret.seal"))
    ct = seal.Ciphertext()
    ct.load(ctx, ciphertext)
    decryptor = seal.Decryptor(ctx, sk)
    budget = decryptor.invariant_noise_budget(ct)
    # seal-python decodes t/2 and above as negative: back to [0, t).
    got = [int(v) % t for v in seal.BatchEncoder(ctx).decode(decryptor.decrypt(ct))]
    with open(expected) as f:
        want = [int(v) % t for v in f.read().split()]
    if len(got) != len(want):
        print(f"SEAL: {len(got)} slots, {len(want)} expected")
        return 1
    bad = [i for i in range(len(got)) if got[i] != want[i]]
    if bad:
        shown = ", ".join(f"slot {i}: {got[i]} != {want[i]}" for i in bad[:5])
        print(f"SEAL: {len(bad)} of {len(got)} slots differ ({shown})")
        return 1
    print(f"SEAL: all {len(got)} slots match (noise budget left {budget} bits)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    sys.exit(main(*sys.argv[1:]))
