//! The C ABI driven from Rust (the C side is tests/c/host_test.c): a KAT through the entry
//! points, compared with the pinned file; handles refused after destroy or of another kind;
//! every status named, and named differently.

use core::ffi::{c_void, CStr};
use zeppelin_ffi::bfv::*;
use zeppelin_ffi::{zeppelin_object_destroy, zeppelin_strerror, ZeppelinStatus};

/// Heap storage aligned to `ZEPPELIN_OBJECT_ALIGN`.
fn storage(bytes: usize) -> Vec<u64> {
    vec![0u64; bytes.div_ceil(8)]
}

fn counting_seed(first: u8) -> [u8; 32] {
    core::array::from_fn(|i| first.wrapping_add(i as u8))
}

#[test]
fn seeded_kat_through_the_abi_matches_the_pinned_file() {
    let file = include_bytes!("../../zeppelin/tests/kats/seal4096/ct_seeded.bin");
    let p = ZEPPELIN_PRESET_SEAL4096;
    let (mut skm, mut ctm) = (
        storage(ZEPPELIN_SEAL4096_SECRET_KEY_SIZE),
        storage(ZEPPELIN_SEAL4096_SEEDED_CIPHERTEXT_SIZE),
    );
    let (mut ptm, mut wsm) = (
        storage(ZEPPELIN_PLAINTEXT_SIZE),
        storage(ZEPPELIN_WORKSPACE_SIZE),
    );
    let (mut sk, mut ct) = (core::ptr::null_mut(), core::ptr::null_mut());
    let (mut pt, mut ws) = (core::ptr::null_mut(), core::ptr::null_mut());
    let slots: Vec<u32> = (0..4096u64)
        .map(|i| ((7919 * i + 13) % 65537) as u32)
        .collect();
    let mut out = vec![0u8; file.len() + 16];
    let mut written = 0usize;
    // SAFETY: every pointer is valid for its length; handles come from the init functions.
    unsafe {
        let ok = ZeppelinStatus::Ok;
        assert_eq!(
            zeppelin_secret_key_init(p, skm.as_mut_ptr().cast(), skm.len() * 8, &mut sk),
            ok
        );
        assert_eq!(
            zeppelin_seeded_ciphertext_init(p, ctm.as_mut_ptr().cast(), ctm.len() * 8, &mut ct),
            ok
        );
        assert_eq!(
            zeppelin_plaintext_init(p, ptm.as_mut_ptr().cast(), ptm.len() * 8, &mut pt),
            ok
        );
        assert_eq!(
            zeppelin_workspace_init(p, wsm.as_mut_ptr().cast(), wsm.len() * 8, &mut ws),
            ok
        );
        assert_eq!(zeppelin_keygen_secret(sk, counting_seed(0x00).as_ptr()), ok);
        assert_eq!(zeppelin_encode(slots.as_ptr(), slots.len(), pt), ok);
        let (a, e) = (counting_seed(0x60), counting_seed(0x80));
        assert_eq!(
            zeppelin_encrypt_seeded(sk, pt, 3, a.as_ptr(), e.as_ptr(), ct, ws),
            ok
        );
        assert_eq!(
            zeppelin_seeded_ciphertext_write(ct, out.as_mut_ptr(), out.len(), &mut written),
            ok
        );
        assert_eq!(&out[..written], &file[..]);
        // A handle of another kind, and one destroyed, are refused; the storage is wiped.
        assert_eq!(
            zeppelin_keygen_secret(pt.cast(), a.as_ptr()),
            ZeppelinStatus::BadObject
        );
        for h in [sk.cast::<c_void>(), ct.cast(), pt.cast(), ws.cast()] {
            assert_eq!(zeppelin_object_destroy(h), ok);
            assert_eq!(zeppelin_object_destroy(h), ZeppelinStatus::BadObject);
        }
        assert!(
            skm.iter().all(|&w| w == 0),
            "the secret key's storage is wiped"
        );
    }
}

#[test]
fn every_status_has_its_own_name() {
    let names: Vec<String> = (0..=28)
        // SAFETY: zeppelin_strerror returns a static NUL-terminated string.
        .map(|c| {
            unsafe { CStr::from_ptr(zeppelin_strerror(c)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for (i, n) in names.iter().enumerate() {
        assert_ne!(n, "unknown status code", "code {i}");
        assert!(
            names[..i].iter().all(|m| m != n),
            "code {i} shares its name"
        );
    }
    // SAFETY: as above.
    let unknown = unsafe { CStr::from_ptr(zeppelin_strerror(29)) };
    assert_eq!(unknown.to_str(), Ok("unknown status code"));
}
