/* The KAT files the Rust tests pin, included byte for byte (paths from the Makefile's -I). */
#define FILE(sym, path) \
  .section .bulk, "a"; .balign 4; .global sym; sym: .incbin path; .global sym##_end; sym##_end:

FILE(seal_sk, "crates/zeppelin/tests/kats/seal4096/sk.bin")
FILE(seal_sk_ntt, "crates/zeppelin/tests/kats/seal4096/sk_ntt.bin")
FILE(seal_pk, "crates/zeppelin/tests/kats/seal4096/pk.bin")
FILE(seal_ct_seeded, "crates/zeppelin/tests/kats/seal4096/ct_seeded.bin")
FILE(seal_ct_symmetric, "crates/zeppelin/tests/kats/seal4096/ct_symmetric.bin")
FILE(seal_ct_public, "crates/zeppelin/tests/kats/seal4096/ct_public.bin")
FILE(zep_sk, "crates/zeppelin/tests/kats/zeppelin4096/sk.bin")
FILE(zep_sk_ntt, "crates/zeppelin/tests/kats/zeppelin4096/sk_ntt.bin")
FILE(zep_pk, "crates/zeppelin/tests/kats/zeppelin4096/pk.bin")
FILE(zep_ct_seeded, "crates/zeppelin/tests/kats/zeppelin4096/ct_seeded.bin")
FILE(zep_ct_symmetric, "crates/zeppelin/tests/kats/zeppelin4096/ct_symmetric.bin")
FILE(zep_ct_public, "crates/zeppelin/tests/kats/zeppelin4096/ct_public.bin")
FILE(rblwe_set1, "crates/rblwe/tests/kats/set1.kat")
FILE(rblwe_set2, "crates/rblwe/tests/kats/set2.kat")
FILE(rblwe_set3, "crates/rblwe/tests/kats/set3.kat")

.section .note.GNU-stack, "", %progbits
