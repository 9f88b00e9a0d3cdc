/* The C example firmware: links libzeppelin.a (the Rust library built for
 * thumbv8m.main-none-eabihf) and, through zeppelin.h only, runs the BFV KATs byte for byte
 * and the RBLWE KATs, printing PASS/FAIL lines, then instruction counts (QEMU -icount
 * shift=0: instructions retired, not cycles) and stack high-water marks per operation.
 * Exit status: the number of failures. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "kats.h"
#include "zeppelin.h"

#ifndef BOARD_NAME
#define BOARD_NAME "unknown board"
#endif

#define DECLARE(sym) extern const uint8_t sym[], sym##_end[]
DECLARE(seal_sk); DECLARE(seal_sk_ntt); DECLARE(seal_pk); DECLARE(seal_ct_seeded);
DECLARE(seal_ct_symmetric); DECLARE(seal_ct_public);
DECLARE(zep_sk); DECLARE(zep_sk_ntt); DECLARE(zep_pk); DECLARE(zep_ct_seeded);
DECLARE(zep_ct_symmetric); DECLARE(zep_ct_public);
DECLARE(rblwe_set1); DECLARE(rblwe_set2); DECLARE(rblwe_set3);
#define SPAN(sym) sym, (size_t)(sym##_end - sym)

static int passed, failed;
static void report(const char *what, int ok) {
  out(ok ? "PASS " : "FAIL ");
  out(what);
  if (!ok) { out(" (first differing byte "); out_u32((uint32_t)kat_first_diff()); out(")"); }
  out_line();
  if (ok) passed++; else failed++;
}

static const char *label;
static void start(void) { meter_begin(); }
static void stop(const char *op) {
  uint32_t instructions, stack;
  meter_end(&instructions, &stack);
  out("INSTR | ");
  out(label);
  out(" | ");
  out(op);
  out(" | ");
  out_u32(instructions);
  out(" | ");
  out_u32(stack);
  out(" |");
  out_line();
}
static const kat_meter meter = {start, stop};

/* A stand-in for a hardware TRNG (QEMU's boards have none): one xorshift32 step per 32-bit
 * "register read", as firmware/m33's SimTrng, so entropy costs what reading a data register
 * costs. NOT entropy: for the measurements only (the KATs use the KAT stream). */
static uint32_t trng_state = 0xC0FFEE | 1;
static int32_t sim_trng(void *ctx, uint8_t *buf, size_t len) {
  (void)ctx;
  uint32_t x = trng_state;
  for (size_t i = 0; i < len; i += 4) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    size_t n = len - i < 4 ? len - i : 4;
    memcpy(buf + i, &x, n);
  }
  trng_state = x;
  return 0;
}

/* RBLWE operations with the TRNG stand-in and a prefetched pool (filled outside the window,
 * the Rust firmware's "prefetched" column), round trips checked. */
static uint64_t rng_mem[(ZEPPELIN_RNG_SIZE + 7) / 8];
static uint64_t ck_mem[(ZEPPELIN_RBLWE_CCA_KEY_SIZE + 7) / 8];
static uint64_t mk_mem[(ZEPPELIN_RBLWE_MASKED_KEY_SIZE + 7) / 8], cmk_mem[(ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE + 7) / 8];
static uint8_t pk[1024], sk[64], ct[1024], msg[64], dec[64], csk[ZEPPELIN_RBLWE_MAX_CCA_SECRET_KEY_BYTES];
static uint8_t cct[ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES];
static const uint8_t seed[32] = {1, 2, 3};

static void rblwe_measure(uint32_t set, const char *name) {
  ZeppelinRng *rng;
  ZeppelinRblweSizes z;
  ZeppelinRblweMaskedKey *mk = NULL;
  ZeppelinRblweCcaMaskedKey *cmk = NULL;
  ZeppelinRblweCcaKey *ck = NULL;
  int ok = zeppelin_rblwe_sizes(set, &z) == ZEPPELIN_STATUS_OK &&
           zeppelin_rng_init(rng_mem, sizeof rng_mem, sim_trng, NULL, &rng) == ZEPPELIN_STATUS_OK;
  label = name;
#define TIMED(op, call) do { ok = ok && zeppelin_rng_prefetch(rng) == ZEPPELIN_STATUS_OK; start(); \
    ok = ok && (call) == ZEPPELIN_STATUS_OK; stop(op); } while (0)
  ok = ok && zeppelin_rng_fill(rng, msg, z.message) == ZEPPELIN_STATUS_OK;
  TIMED("cpa keygen", zeppelin_rblwe_cpa_keygen(set, seed, rng, pk, sizeof pk, sk, sizeof sk));
  TIMED("cpa encrypt", zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key, msg, z.message, rng, ct, sizeof ct));
  TIMED("cpa decrypt", zeppelin_rblwe_cpa_decrypt(set, sk, z.secret_key, ct, z.ciphertext, dec, sizeof dec));
  ok = ok && memcmp(dec, msg, z.message) == 0;
  TIMED("masked keygen (cpa)", zeppelin_rblwe_masked_keygen(set, seed, rng, pk, sizeof pk, mk_mem, sizeof mk_mem, &mk));
  ok = ok && zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key, msg, z.message, rng, ct, sizeof ct) == ZEPPELIN_STATUS_OK;
  TIMED("masked cpa decrypt", zeppelin_rblwe_masked_decrypt(mk, ct, z.ciphertext, rng, dec, sizeof dec));
  ok = ok && memcmp(dec, msg, z.message) == 0;
  TIMED("cca keygen", zeppelin_rblwe_cca_keygen(set, seed, rng, pk, sizeof pk, csk, sizeof csk));
  TIMED("cca encrypt", zeppelin_rblwe_cca_encrypt(set, pk, z.public_key, msg, z.message, rng, cct, sizeof cct));
  TIMED("cca decrypt (key from bytes)", zeppelin_rblwe_cca_decrypt(set, csk, z.cca_secret_key, cct, z.cca_ciphertext, rng, dec, sizeof dec));
  ok = ok && memcmp(dec, msg, z.message) == 0;
  TIMED("cca key object from bytes", zeppelin_rblwe_cca_key_init(set, ck_mem, sizeof ck_mem, csk, z.cca_secret_key, &ck));
  memset(dec, 0, sizeof dec);
  TIMED("cca decrypt (key object)", zeppelin_rblwe_cca_key_decrypt(ck, cct, z.cca_ciphertext, rng, dec, sizeof dec));
  ok = ok && memcmp(dec, msg, z.message) == 0;
  TIMED("masked cca keygen", zeppelin_rblwe_cca_masked_keygen(set, seed, rng, pk, sizeof pk, cmk_mem, sizeof cmk_mem, &cmk));
  ok = ok && zeppelin_rblwe_cca_encrypt(set, pk, z.public_key, msg, z.message, rng, cct, sizeof cct) == ZEPPELIN_STATUS_OK;
  TIMED("masked cca decrypt", zeppelin_rblwe_cca_masked_decrypt(cmk, cct, z.cca_ciphertext, rng, dec, sizeof dec));
  ok = ok && memcmp(dec, msg, z.message) == 0;
#undef TIMED
  zeppelin_object_destroy(mk);
  zeppelin_object_destroy(cmk);
  zeppelin_object_destroy(ck);
  zeppelin_object_destroy(rng);
  memset(sk, 0, sizeof sk);
  memset(csk, 0, sizeof csk);
  static char what[96];
  size_t n = strlen(name);
  memcpy(what, "measured ", 9);
  memcpy(what + 9, name, n);
  memcpy(what + 9 + n, " operations round-trip", 23);
  report(what, ok);
}

int main(void) {
  out("zeppelin C example firmware, " BOARD_NAME ", library ");
  out(zeppelin_version());
  out_line();
  meter_calibrate();
  out("SysTick calibration: ");
  out_u32(meter_ticks_per_million());
  out(" ticks per 1,000,000 instructions (counted loop; QEMU -icount shift=0)");
  out_line();

  const bfv_kat_files seal = {seal_sk, seal_sk_ntt, seal_pk, seal_ct_seeded, seal_ct_symmetric, seal_ct_public,
      (size_t)(seal_sk_end - seal_sk), (size_t)(seal_sk_ntt_end - seal_sk_ntt), (size_t)(seal_pk_end - seal_pk),
      (size_t)(seal_ct_seeded_end - seal_ct_seeded), (size_t)(seal_ct_symmetric_end - seal_ct_symmetric),
      (size_t)(seal_ct_public_end - seal_ct_public)};
  const bfv_kat_files zep = {zep_sk, zep_sk_ntt, zep_pk, zep_ct_seeded, zep_ct_symmetric, zep_ct_public,
      (size_t)(zep_sk_end - zep_sk), (size_t)(zep_sk_ntt_end - zep_sk_ntt), (size_t)(zep_pk_end - zep_pk),
      (size_t)(zep_ct_seeded_end - zep_ct_seeded), (size_t)(zep_ct_symmetric_end - zep_ct_symmetric),
      (size_t)(zep_ct_public_end - zep_ct_public)};
  out("== INSTR | preset or set | operation | instructions retired (QEMU) | stack bytes | (KAT runs: software AES-CTR on both streams; RBLWE KAT runs draw from the SHA-256 KAT stream) ==");
  out_line();
  label = "seal4096";
  run_bfv_kats(ZEPPELIN_PRESET_SEAL4096, "seal4096", &seal, report, &meter);
  label = "zeppelin4096";
  run_bfv_kats(ZEPPELIN_PRESET_ZEPPELIN4096, "zeppelin4096", &zep, report, &meter);
  label = "rblwe set1 (KAT stream)";
  run_rblwe_kat(ZEPPELIN_RBLWE_SET1, "rblwe set1", SPAN(rblwe_set1), report, &meter);
  label = "rblwe set2 (KAT stream)";
  run_rblwe_kat(ZEPPELIN_RBLWE_SET2, "rblwe set2", SPAN(rblwe_set2), report, &meter);
  label = "rblwe set3 (KAT stream)";
  run_rblwe_kat(ZEPPELIN_RBLWE_SET3, "rblwe set3", SPAN(rblwe_set3), report, &meter);
  out("== RBLWE with a TRNG stand-in (xorshift32 per word), pool prefetched outside the window ==");
  out_line();
  rblwe_measure(ZEPPELIN_RBLWE_SET1, "rblwe set1");
  rblwe_measure(ZEPPELIN_RBLWE_SET3, "rblwe set3");

  /* a few refusals on target: bad input gives a status, not a trap */
  uint8_t junk[64] = {0};
  int refused = zeppelin_rblwe_cpa_decrypt(9, junk, 32, junk, 64, junk, 32) == ZEPPELIN_STATUS_UNKNOWN_PRESET &&
                zeppelin_rblwe_cpa_decrypt(1, junk, 31, junk, 64, junk, 32) == ZEPPELIN_STATUS_LENGTH &&
                zeppelin_object_destroy(junk) == ZEPPELIN_STATUS_BAD_OBJECT &&
                zeppelin_encode(NULL, 4, NULL) == ZEPPELIN_STATUS_NULL_POINTER;
  report("invalid inputs refused with status codes on target", refused);

  out("RESULT ");
  out_u32((uint32_t)passed);
  out(" passed, ");
  out_u32((uint32_t)failed);
  out(" failed");
  out_line();
  return failed;
}
