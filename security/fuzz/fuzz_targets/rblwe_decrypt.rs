//! RBLWE decryption of arbitrary ciphertext files with the fixed keys of every set and
//! scheme, as `zeppelin rblwe decrypt` does it: open the container, read the payload, then
//! decrypt plain and masked. The masked decryption must return the same message as the
//! plain one (it is the same function computed on shares).
#![no_main]

use std::sync::OnceLock;

use fuzz_common::{rblwe_keys, rblwe_pool, RblweKeys, RBLWE_POOL};
use libfuzzer_sys::fuzz_target;
use rblwe::cca::{self, CcaCiphertext, CcaSecretKey};
use rblwe::container::{self, Kind, Scheme};
use rblwe::masked::MaskedSecretKey;
use rblwe::{cpa, Ciphertext, Hardened, ParamSet, Set1, Set2, Set3, SetId};

fn run<P: ParamSet>(keys: &RblweKeys<P>, scheme: Scheme, payload: &[u8]) {
    let mut pool = rblwe_pool(b"fuzz decrypt");
    let mut plain = vec![0u8; P::N / 8];
    let mut masked_out = vec![0u8; P::N / 8];
    match scheme {
        Scheme::Cpa => {
            let Ok(ct) = Ciphertext::<P>::from_bytes(payload) else {
                return;
            };
            cpa::decrypt::<P, Hardened>(&keys.cpa_sk, &ct, &mut plain).expect("CPA decrypts");
            let mut masked =
                MaskedSecretKey::from_secret_key(&keys.cpa_sk, &mut pool).expect("masks");
            masked
                .decrypt::<Hardened, _, RBLWE_POOL>(&ct, &mut pool, &mut masked_out)
                .expect("masked CPA decrypts");
        }
        Scheme::Cca2 => {
            let Ok(ct) = CcaCiphertext::<P>::from_bytes(payload) else {
                return;
            };
            let mut sk_bytes = vec![0u8; CcaSecretKey::<P>::BYTES];
            keys.cca_sk.write_bytes(&mut sk_bytes).expect("key writes");
            let mut sk = CcaSecretKey::<P>::from_bytes(&sk_bytes).expect("key reads");
            cca::decrypt::<P, Hardened, _, _, RBLWE_POOL>(&mut sk, &ct, &mut pool, &mut plain)
                .expect("CCA2 decrypts (implicit rejection)");
            let mut masked = sk.to_masked(&mut pool).expect("masks");
            cca::decrypt::<P, Hardened, _, _, RBLWE_POOL>(
                &mut masked,
                &ct,
                &mut pool,
                &mut masked_out,
            )
            .expect("masked CCA2 decrypts");
        }
    }
    assert!(plain == masked_out, "masked decryption equals plain decryption");
}

fuzz_target!(|data: &[u8]| {
    static SET1: OnceLock<RblweKeys<Set1>> = OnceLock::new();
    static SET2: OnceLock<RblweKeys<Set2>> = OnceLock::new();
    static SET3: OnceLock<RblweKeys<Set3>> = OnceLock::new();
    let Ok((header, payload)) = container::open(data, Kind::Ciphertext) else {
        return;
    };
    match header.set {
        SetId::Set1 => run(SET1.get_or_init(rblwe_keys), header.scheme, payload),
        SetId::Set2 => run(SET2.get_or_init(rblwe_keys), header.scheme, payload),
        SetId::Set3 => run(SET3.get_or_init(rblwe_keys), header.scheme, payload),
    }
});
