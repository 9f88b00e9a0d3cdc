//! Simulated single-point logical faults (feature `fault-sim`, enabled for this test only:
//! `cargo test --release -p rblwe --features fault-sim --test fault_campaign`): each
//! fault is injected into the hardened configuration, and into the same code without fault
//! hardening to show what the countermeasure prevents. One test function, because the
//! injected fault is process-wide.

use rblwe::cca::{self, CcaCiphertext};
use rblwe::cpa;
use rblwe::fault::{inject, Fault};
use rblwe::{ConstantTime, EntropyPool, Error, Hardened, KatEntropy, PublicParameter, Set1};

/// Hardened decryption of `ct` under the injected fault must report exactly `check` and
/// leave the output erased (it starts filled with 0xEE).
fn assert_detected_and_erased(
    sk: &mut cca::CcaSecretKey<Set1>,
    ct: &CcaCiphertext<Set1>,
    pool: &mut EntropyPool<KatEntropy, 1024>,
    check: &str,
) {
    let mut out = [0xEE; 32];
    let r = cca::decrypt::<Set1, Hardened, _, _, 1024>(sk, ct, pool, &mut out);
    assert!(
        matches!(r, Err(Error::FaultDetected { check: c }) if c == check),
        "expected {check}: {r:?}"
    );
    assert_eq!(out, [0u8; 32], "output erased");
}

#[test]
fn simulated_faults_never_release_unauthenticated_or_silently_corrupted_output() {
    let a = PublicParameter::<Set1>::from_seed(&[0x11; 32]);
    let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"faults"));
    let (pk, mut sk) = cca::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool).unwrap();
    let message = [0xC3u8; 32];
    let valid = cca::encrypt::<Set1, Hardened, _, 1024>(&pk, &message, &mut pool).unwrap();
    let mut bytes = [0u8; 576];
    valid.write_bytes(&mut bytes).unwrap();
    bytes[575] ^= 0x20; // tamper with the tag: the CPA part still decrypts to the right v
    let invalid = CcaCiphertext::<Set1>::from_bytes(&bytes).unwrap();
    let mut out = [0u8; 32];

    // Reference behaviour without faults.
    inject(Fault::None);
    cca::decrypt::<Set1, Hardened, _, _, 1024>(&mut sk, &invalid, &mut pool, &mut out).unwrap();
    let rejection = out;
    assert_ne!(rejection, message);

    // 1. Comparison faults on an invalid ciphertext: the hardened build still rejects (the
    //    other comparison's mask holds); a single comparison is bypassed by one fault.
    for fault in [
        Fault::ZeroForwardAccumulator,
        Fault::ForceForwardMask,
        Fault::ZeroReverseAccumulator,
        Fault::ForceReverseMask,
    ] {
        inject(fault);
        cca::decrypt::<Set1, Hardened, _, _, 1024>(&mut sk, &invalid, &mut pool, &mut out).unwrap();
        assert_eq!(out, rejection, "hardened, {fault:?}: must still reject");
    }
    inject(Fault::ZeroForwardAccumulator);
    cca::decrypt::<Set1, ConstantTime, _, _, 1024>(&mut sk, &invalid, &mut pool, &mut out).unwrap();
    assert_eq!(
        out, message,
        "without hardening one zeroed accumulator admits the forgery"
    );

    // 2. Skipped output store on a valid ciphertext: the duplicated store catches it; without
    //    it the output is silently corrupted (the paper's residual gap).
    inject(Fault::SkipOutputStore);
    out = [0xEE; 32];
    let r = cca::decrypt::<Set1, Hardened, _, _, 1024>(&mut sk, &valid, &mut pool, &mut out);
    assert!(matches!(r, Err(Error::FaultDetected { .. })), "{r:?}");
    assert_eq!(out, [0u8; 32], "output erased");
    out = [0xEE; 32];
    cca::decrypt::<Set1, ConstantTime, _, _, 1024>(&mut sk, &valid, &mut pool, &mut out).unwrap();
    assert_ne!(out, message, "without hardening: silent corruption");
    assert_eq!(out[1..], message[1..]);

    // 2b. A wrong rejection value (a wrong pointer to C or z inside the decryption): the
    //     binding check re-derives it from the caller's key and ciphertext, detects and
    //     erases, for valid and invalid ciphertexts; without hardening the caller gets Ok
    //     with a value that is neither the message nor R(z, H(C)).
    inject(Fault::CorruptRejectionValue);
    for ct in [&valid, &invalid] {
        assert_detected_and_erased(&mut sk, ct, &mut pool, "ciphertext and key binding");
    }
    cca::decrypt::<Set1, ConstantTime, _, _, 1024>(&mut sk, &invalid, &mut pool, &mut out).unwrap();
    assert_ne!(out, rejection, "without hardening: silent corruption");
    assert_ne!(out, message);

    // 2c. The ciphertext pointer redirected before any copy of it exists (every use reads
    //     other bytes): the binding check derives R(z, .) from the digest made with the
    //     ciphertext, the decryption from the bytes it reads; they differ, so the fault is
    //     detected and erased. Without hardening: Ok with the rejection value of other
    //     bytes (a silent corruption for a valid ciphertext).
    inject(Fault::RedirectCiphertext);
    for ct in [&valid, &invalid] {
        assert_detected_and_erased(&mut sk, ct, &mut pool, "ciphertext and key binding");
    }
    cca::decrypt::<Set1, ConstantTime, _, _, 1024>(&mut sk, &valid, &mut pool, &mut out).unwrap();
    assert_ne!(out, message, "without hardening: silent corruption");

    // 2d. The output pointer redirected before any copy of it exists: the decryption writes
    //     elsewhere and its own output checks pass; the caller-side check of the reported
    //     address detects it and erases the caller's buffer. Without hardening: Ok with the
    //     buffer never written.
    inject(Fault::RedirectOutput);
    for ct in [&valid, &invalid] {
        assert_detected_and_erased(&mut sk, ct, &mut pool, "output address at the caller");
    }
    out = [0xEE; 32];
    cca::decrypt::<Set1, ConstantTime, _, _, 1024>(&mut sk, &valid, &mut pool, &mut out).unwrap();
    assert_eq!(
        out, [0xEE; 32],
        "without hardening: Ok, output never written"
    );

    // 2e. The secret-key pointer redirected before any copy of it exists (every use reads
    //     another z): decryption and binding check agree with each other, the key binding
    //     made with the key does not. Without hardening: Ok with the rejection value under
    //     another z.
    inject(Fault::RedirectSecretKey);
    for ct in [&valid, &invalid] {
        assert_detected_and_erased(&mut sk, ct, &mut pool, "secret key binding");
    }
    cca::decrypt::<Set1, ConstantTime, _, _, 1024>(&mut sk, &invalid, &mut pool, &mut out).unwrap();
    assert_ne!(out, rejection, "without hardening: silent corruption");
    assert_ne!(out, message);
    inject(Fault::None);
    cca::decrypt::<Set1, Hardened, _, _, 1024>(&mut sk, &invalid, &mut pool, &mut out).unwrap();
    assert_eq!(
        out, rejection,
        "the simulated fault leaves the key as it was"
    );

    // 3. Zeroed secret at key generation: refused and erased; otherwise a weak key.
    inject(Fault::ZeroSecretAtKeygen);
    assert!(matches!(
        cpa::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool),
        Err(Error::InvalidKey { .. })
    ));
    let (_, weak) = cpa::keygen::<Set1, ConstantTime, _, 1024>(&a, &mut pool).unwrap();
    let mut weak_bytes = [1u8; 32];
    weak.write_bytes(&mut weak_bytes).unwrap();
    assert_eq!(
        weak_bytes, [0u8; 32],
        "without hardening the all-zero key is accepted"
    );

    // 4. Zeroed secret at decryption and a corrupted decoder store: detected, output erased.
    inject(Fault::None);
    let (cpk, csk) = cpa::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool).unwrap();
    let ct = cpa::encrypt::<Set1, Hardened, _, 1024>(&cpk, &message, &mut pool).unwrap();
    inject(Fault::ZeroSecretAtDecrypt);
    out = [0xEE; 32];
    assert!(matches!(
        cpa::decrypt::<Set1, Hardened>(&csk, &ct, &mut out),
        Err(Error::InvalidKey { .. })
    ));
    assert_eq!(out, [0u8; 32]);
    inject(Fault::CorruptDecodedByte);
    assert!(matches!(
        cpa::decrypt::<Set1, Hardened>(&csk, &ct, &mut out),
        Err(Error::FaultDetected { .. })
    ));
    cpa::decrypt::<Set1, ConstantTime>(&csk, &ct, &mut out).unwrap();
    assert_ne!(out, message, "without hardening: silent corruption");

    inject(Fault::None);
    cpa::decrypt::<Set1, Hardened>(&csk, &ct, &mut out).unwrap();
    assert_eq!(out, message);
}
