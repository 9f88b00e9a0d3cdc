//! The device's wire forms (SEAL's `Ciphertext` layout, seeded with Zeppelin's AES-CTR
//! `prng_type`) live in the device crate, `zeppelin::wire` (no allocation, `core` only); the
//! tests here check them against `zeppelin-seal`, whose writer and parms_id are checked byte
//! for byte against SEAL in its own tests.

pub use zeppelin::wire::*;

#[cfg(test)]
mod tests {
    use super::*;
    use zeppelin::{
        encoder, Bfv, Ciphertext, EncryptionSeeds, Params, PublicSeed, Seal4096, SecretKey,
        SecretSeed, SeededCiphertext, Workspace, Zeppelin4096, N,
    };
    use zeppelin_seal::{
        adapter::seal4096_parameters, Ciphertext as SealCt, ComprMode, ParmsId, SealContext,
    };

    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }

    fn computed_ids<P: Params>() -> Vec<[u8; 32]> {
        (1..=P::K)
            .map(|l| {
                let primes: Vec<u64> = P::DATA_PRIMES[..l].iter().map(|&q| u64::from(q)).collect();
                ParmsId::compute(1, N as u64, &primes, 65537).0
            })
            .collect()
    }

    fn encrypt<P: Params>(level: usize) -> (Box<Ciphertext<P>>, Box<SeededCiphertext<P>>) {
        let mut sk = Box::new(SecretKey::<P>::zeroed());
        Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk).unwrap();
        let mut slots = Box::new([0u32; N]);
        for (i, s) in slots.iter_mut().enumerate() {
            *s = (i as u32 * 31) % 65537;
        }
        let mut plain = Box::new([0u32; N]);
        encoder::encode(&slots, &mut plain).unwrap();
        let seeds = EncryptionSeeds {
            a: PublicSeed([2; 32]),
            e: SecretSeed::from_bytes([3; 32]),
        };
        let mut ws = Box::new(Workspace::zeroed());
        let mut full = Box::new(Ciphertext::<P>::zeroed());
        Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, level, &mut full, &mut ws).unwrap();
        let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
        Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut seeded, &mut ws).unwrap();
        (full, seeded)
    }

    #[test]
    fn level_id_table_is_seals_parms_id() {
        for (l, id) in computed_ids::<Zeppelin4096>().iter().enumerate() {
            assert_eq!(parms_id::<Zeppelin4096>(l + 1), Some(id));
        }
        for (l, id) in computed_ids::<Seal4096>().iter().enumerate() {
            assert_eq!(parms_id::<Seal4096>(l + 1), Some(id));
        }
        assert_eq!(parms_id::<Seal4096>(4), None);
        assert_eq!(parms_id::<Seal4096>(0), None);
    }

    #[test]
    fn full_form_is_byte_for_byte_the_seal_ciphertext() {
        // zeppelin-seal's writer is checked byte for byte against SEAL in its own tests.
        let ctx = SealContext::new(seal4096_parameters()).unwrap();
        for level in 1..=3 {
            let (full, _) = encrypt::<Seal4096>(level);
            let mut out = vec![0u8; full_len(level)];
            assert_eq!(write_full(&full, &mut out).unwrap(), out.len());
            let mut data: Vec<u64> = full.c0().iter().map(|&v| u64::from(v)).collect();
            data.extend(full.c1().iter().map(|&v| u64::from(v)));
            let seal_level = ctx.data_level_with(level).unwrap();
            let seal = SealCt::new(seal_level, N, 2, false, data).unwrap();
            assert_eq!(out, seal.save(ComprMode::None).unwrap());
            let mut back = Box::new(Ciphertext::<Seal4096>::zeroed());
            read_full(&out, &mut back).unwrap();
            assert_eq!(back.c0(), full.c0());
            assert_eq!(back.c1(), full.c1());
        }
    }

    #[test]
    fn seeded_form_is_seals_seeded_layout_with_the_aes_type() {
        let (_, seeded) = encrypt::<Zeppelin4096>(4);
        let mut out = vec![0u8; seeded_len(4)];
        write_seeded(&seeded, &mut out).unwrap();
        assert_eq!(out.len(), 131_266);
        assert!(is_seeded_form(&out));
        let info = &out[out.len() - 81..];
        assert_eq!(&info[..6], &[0x5E, 0xA1, 0x10, 4, 1, 0]);
        assert_eq!(u64_at(info, 8), 81);
        assert_eq!(info[16], AES_CTR_PRNG_TYPE);
        assert_eq!(&info[17..49], &seeded.seed().0);
        let mut back = Box::new(SeededCiphertext::<Zeppelin4096>::zeroed());
        read_seeded(&out, &mut back).unwrap();
        assert_eq!(back.c0(), seeded.c0());
        assert_eq!(back.seed().0, seeded.seed().0);
        // Too small a buffer is an error, not a panic.
        let mut small = vec![0u8; 100];
        assert!(matches!(
            write_seeded(&seeded, &mut small),
            Err(WireError::BufferTooSmall { .. })
        ));
    }

    #[test]
    fn truncations_and_bit_flips_never_panic() {
        let (full, seeded) = encrypt::<Seal4096>(3);
        let mut f = vec![0u8; full_len(3)];
        write_full(&full, &mut f).unwrap();
        let mut s = vec![0u8; seeded_len(3)];
        write_seeded(&seeded, &mut s).unwrap();
        let mut ct = Box::new(Ciphertext::<Seal4096>::zeroed());
        let mut sct = Box::new(SeededCiphertext::<Seal4096>::zeroed());
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for cut in (0..300).chain((0..300).map(|_| (next() % f.len() as u64) as usize)) {
            assert!(read_full(&f[..cut], &mut ct).is_err());
            assert!(read_seeded(&s[..cut.min(s.len() - 1)], &mut sct).is_err());
        }
        let mut rejected = 0;
        for _ in 0..1000 {
            let mut b = f.clone();
            let pos = (next() % 200) as usize;
            b[pos] ^= 1 << (next() % 8);
            rejected += usize::from(read_full(&b, &mut ct).is_err());
            let mut b = s.clone();
            let pos = s.len() - 1 - (next() % 81) as usize;
            b[pos] ^= 1 << (next() % 8);
            let _ = read_seeded(&b, &mut sct);
        }
        // Flips in the first 200 bytes hit the structure (113 bytes) or residues, whose high
        // bytes cannot change without leaving [0, q).
        assert!(rejected > 600, "{rejected}");
    }
}
