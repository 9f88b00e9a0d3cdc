/* Host test of the C ABI (crates/ffi/include/zeppelin.h), built with
 * -fsanitize=address,undefined against the host libzeppelin_ffi.a (run.sh): every function
 * with valid inputs (KATs byte for byte against the files the Rust tests pin, round trips,
 * an independent OpenSSL AES-128-CTR as the board keystream) and with random invalid inputs
 * (NULL, short, misaligned, foreign or garbage handles and bytes), which must give error
 * codes and never a crash. Usage: host_test REPO_ROOT */
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kats.h"
#include "zeppelin.h"

static int passes, fails;
static void report(const char *what, int ok) {
  if (ok) passes++; else fails++;
  printf("%s %s\n", ok ? "PASS" : "FAIL", what);
}
static long checks; /* individual expectations inside one reported group */
static int group_fails;
#define EXPECT(cond) do { checks++; if (!(cond)) { group_fails++; printf("  expectation failed at line %d: %s\n", __LINE__, #cond); } } while (0)
#define OK(call) EXPECT((call) == ZEPPELIN_STATUS_OK)
#define ERR(call) EXPECT((call) != ZEPPELIN_STATUS_OK)
#define IS(call, code) EXPECT((call) == (code))
static void group(const char *what) {
  char line[160];
  snprintf(line, sizeof line, "%s (%ld checks)", what, checks);
  report(line, group_fails == 0);
  checks = 0;
  group_fails = 0;
}

static uint8_t *load(const char *root, const char *rel, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "rb");
  if (!f) { printf("FAIL cannot open %s\n", path); exit(2); }
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*len ? *len : 1);
  if (fread(b, 1, *len, f) != *len) { printf("FAIL cannot read %s\n", path); exit(2); }
  fclose(f);
  return b;
}

static void *storage(size_t size) { return aligned_alloc(8, (size + 7) / 8 * 8); }

/* ----- entropy and keystream callbacks ----------------------------------------------------- */
static uint64_t xs = 0x9E3779B97F4A7C15ull;
static uint8_t next_byte(void) { xs ^= xs << 13; xs ^= xs >> 7; xs ^= xs << 17; return (uint8_t)(xs >> 24); }
static int32_t test_entropy(void *ctx, uint8_t *out, size_t len) { (void)ctx; for (size_t i = 0; i < len; i++) out[i] = next_byte(); return 0; }
static int32_t failing_entropy(void *ctx, uint8_t *out, size_t len) { (void)ctx; (void)out; (void)len; return -1; }

static EVP_CIPHER_CTX *evp;
static int keystream_fail;
static int32_t ossl_start(void *ctx, const uint8_t *seed) {
  (void)ctx;
  return EVP_EncryptInit_ex(evp, EVP_aes_128_ctr(), NULL, seed, seed + 16) == 1 ? 0 : 1;
}
static int32_t ossl_fill(void *ctx, uint8_t *out, size_t len) {
  (void)ctx;
  if (keystream_fail) return 7;
  static uint8_t zeros[4096];
  while (len) {
    int n = len > sizeof zeros ? (int)sizeof zeros : (int)len, outl = 0;
    if (EVP_EncryptUpdate(evp, out, &outl, zeros, n) != 1 || outl != n) return 1;
    out += n;
    len -= (size_t)n;
  }
  return 0;
}

/* ----- the presets' storage ---------------------------------------------------------------- */
typedef struct {
  uint32_t preset;
  ZeppelinPresetInfo info;
  size_t sk_size, pk_size, ct_size, sct_size;
  void *sk_m, *pk_m, *ct_m, *ct2_m, *sct_m, *pt_m, *ws_m;
  ZeppelinSecretKey *sk;
  ZeppelinPublicKey *pk;
  ZeppelinCiphertext *ct, *ct2;
  ZeppelinSeededCiphertext *sct;
  ZeppelinPlaintext *pt;
  ZeppelinWorkspace *ws;
} objects;

static void make(objects *o, uint32_t preset) {
  memset(o, 0, sizeof *o);
  o->preset = preset;
  OK(zeppelin_preset_info(preset, &o->info));
  int s = preset == ZEPPELIN_PRESET_SEAL4096;
  o->sk_size = s ? ZEPPELIN_SEAL4096_SECRET_KEY_SIZE : ZEPPELIN_ZEPPELIN4096_SECRET_KEY_SIZE;
  o->pk_size = s ? ZEPPELIN_SEAL4096_PUBLIC_KEY_SIZE : ZEPPELIN_ZEPPELIN4096_PUBLIC_KEY_SIZE;
  o->ct_size = s ? ZEPPELIN_SEAL4096_CIPHERTEXT_SIZE : ZEPPELIN_ZEPPELIN4096_CIPHERTEXT_SIZE;
  o->sct_size = s ? ZEPPELIN_SEAL4096_SEEDED_CIPHERTEXT_SIZE : ZEPPELIN_ZEPPELIN4096_SEEDED_CIPHERTEXT_SIZE;
  o->sk_m = storage(o->sk_size); o->pk_m = storage(o->pk_size); o->ct_m = storage(o->ct_size);
  o->ct2_m = storage(o->ct_size); o->sct_m = storage(o->sct_size);
  o->pt_m = storage(ZEPPELIN_PLAINTEXT_SIZE); o->ws_m = storage(ZEPPELIN_WORKSPACE_SIZE);
  OK(zeppelin_secret_key_init(preset, o->sk_m, o->sk_size, &o->sk));
  OK(zeppelin_public_key_init(preset, o->pk_m, o->pk_size, &o->pk));
  OK(zeppelin_ciphertext_init(preset, o->ct_m, o->ct_size, &o->ct));
  OK(zeppelin_ciphertext_init(preset, o->ct2_m, o->ct_size, &o->ct2));
  OK(zeppelin_seeded_ciphertext_init(preset, o->sct_m, o->sct_size, &o->sct));
  OK(zeppelin_plaintext_init(preset, o->pt_m, ZEPPELIN_PLAINTEXT_SIZE, &o->pt));
  OK(zeppelin_workspace_init(preset, o->ws_m, ZEPPELIN_WORKSPACE_SIZE, &o->ws));
}

static void unmake(objects *o) {
  void *all[] = {o->sk, o->pk, o->ct, o->ct2, o->sct, o->pt, o->ws};
  for (size_t i = 0; i < 7; i++) OK(zeppelin_object_destroy(all[i]));
  void *mem[] = {o->sk_m, o->pk_m, o->ct_m, o->ct2_m, o->sct_m, o->pt_m, o->ws_m};
  for (size_t i = 0; i < 7; i++) free(mem[i]);
}

static uint8_t wire[2 * 4 * 4096 * 8 + 4096];
static uint8_t wire2[sizeof wire];
static uint32_t slots[4096], back[4096], scratch[4 * 4096];

static void round_trips(objects *o, ZeppelinRng *rng) {
  const uint32_t n = o->info.n, k = o->info.k, t = o->info.t;
  size_t len = 0, expect = 0;
  for (uint32_t i = 0; i < n; i++) slots[i] = (uint32_t)(next_byte() | next_byte() << 8) % t;
  OK(zeppelin_keygen_secret_random(o->sk, rng));
  OK(zeppelin_keygen_public_random(o->sk, o->pk, o->ws, rng));
  OK(zeppelin_encode(slots, n, o->pt));
  for (uint32_t level = 1; level <= k; level++) {
    /* seeded: direct decryption, expansion, wire form round trip */
    OK(zeppelin_encrypt_seeded_random(o->sk, o->pt, level, rng, o->sct, o->ws));
    OK(zeppelin_decrypt_seeded(o->sk, o->sct, o->pt, o->ws));
    memset(back, 0, sizeof back);
    OK(zeppelin_decode(o->pt, back, n));
    EXPECT(memcmp(back, slots, n * 4) == 0);
    OK(zeppelin_seeded_ciphertext_write_wire(o->sct, wire, sizeof wire, &len));
    OK(zeppelin_wire_seeded_len(o->preset, level, &expect));
    EXPECT(len == expect);
    OK(zeppelin_seeded_ciphertext_read_wire(o->sct, wire, len));
    OK(zeppelin_seeded_ciphertext_write_wire(o->sct, wire2, sizeof wire2, &len));
    EXPECT(memcmp(wire, wire2, len) == 0);
    OK(zeppelin_expand_seeded(o->sct, o->ct));
    OK(zeppelin_decrypt(o->sk, o->ct, o->pt, o->ws));
    OK(zeppelin_decode(o->pt, back, n));
    EXPECT(memcmp(back, slots, n * 4) == 0);
    uint32_t lv = 0;
    OK(zeppelin_ciphertext_level(o->ct, &lv));
    EXPECT(lv == level);
    /* symmetric and public-key: full wire round trip, noise budget */
    for (int path = 0; path < 2; path++) {
      OK(zeppelin_encode(slots, n, o->pt));
      if (path == 0) OK(zeppelin_encrypt_symmetric_random(o->sk, o->pt, level, rng, o->ct, o->ws));
      else OK(zeppelin_encrypt_public_random(o->pk, o->pt, level, rng, o->ct, o->ws));
      OK(zeppelin_ciphertext_write_wire(o->ct, wire, sizeof wire, &len));
      OK(zeppelin_wire_full_len(o->preset, level, &expect));
      EXPECT(len == expect);
      OK(zeppelin_ciphertext_read_wire(o->ct2, wire, len));
      OK(zeppelin_ciphertext_write(o->ct2, wire2, sizeof wire2, &len));
      OK(zeppelin_ciphertext_read(o->ct, level, wire2, len));
      uint32_t bits = 0;
      OK(zeppelin_noise_budget(o->sk, o->ct2, o->ws, scratch, (size_t)level * n, &bits));
      /* one 27-bit prime leaves no budget above t = 2^16 + 1; every other level does */
      EXPECT(level == 1 || bits > 0);
      if (level == k) printf("  noise budget, preset %u, %s, level %u: %u bits\n", o->preset, path ? "public" : "symmetric", level, bits);
      OK(zeppelin_decrypt(o->sk, o->ct, o->pt, o->ws));
      OK(zeppelin_decode(o->pt, back, n));
      EXPECT(memcmp(back, slots, n * 4) == 0);
    }
  }
  /* keys through their raw forms */
  OK(zeppelin_secret_key_write(o->sk, wire, sizeof wire, &len));
  EXPECT(len == n);
  OK(zeppelin_secret_key_read(o->sk, wire, len));
  /* the seeded public key: keygen records the seed p̂1 was expanded from, a reader has none */
  uint8_t public_seed[32], error_seed[32], got_seed[32];
  for (int i = 0; i < 32; i++) {
    public_seed[i] = (uint8_t)(7 * i + 1);
    error_seed[i] = (uint8_t)(5 * i + 3);
  }
  OK(zeppelin_keygen_public(o->sk, o->pk, o->ws, public_seed, error_seed));
  OK(zeppelin_public_key_seed(o->pk, got_seed));
  EXPECT(memcmp(got_seed, public_seed, 32) == 0);
  IS(zeppelin_public_key_seed(o->pk, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_public_key_seed(NULL, got_seed), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_public_key_seed((ZeppelinPublicKey *)o->sk, got_seed), ZEPPELIN_STATUS_BAD_OBJECT);
  OK(zeppelin_public_key_write(o->pk, wire, sizeof wire, &len));
  OK(zeppelin_public_key_read(o->pk, wire, len));
  IS(zeppelin_public_key_seed(o->pk, got_seed), ZEPPELIN_STATUS_NO_PUBLIC_SEED);
  OK(zeppelin_encrypt_public_random(o->pk, o->pt, k, rng, o->ct, o->ws));
  OK(zeppelin_decrypt(o->sk, o->ct, o->pt, o->ws));
  OK(zeppelin_decode(o->pt, back, n));
  EXPECT(memcmp(back, slots, n * 4) == 0);
  /* fixed point: error at most 2^-(f+1) */
  double values[64], out[64];
  for (int i = 0; i < 64; i++) values[i] = ((int)next_byte() - 128) / 7.0;
  OK(zeppelin_quantize(o->preset, 8, values, 64, slots, n));
  OK(zeppelin_encode(slots, n, o->pt));
  OK(zeppelin_encrypt_seeded_random(o->sk, o->pt, k, rng, o->sct, o->ws));
  OK(zeppelin_decrypt_seeded(o->sk, o->sct, o->pt, o->ws));
  OK(zeppelin_decode(o->pt, back, n));
  OK(zeppelin_dequantize(o->preset, 8, back, 64, out));
  for (int i = 0; i < 64; i++) EXPECT(fabs(out[i] - values[i]) <= 1.0 / 512);
}

/* ----- invalid inputs ---------------------------------------------------------------------- */
static void fill_random(uint8_t *p, size_t len) { for (size_t i = 0; i < len; i++) p[i] = next_byte(); }

static void invalid_bfv(objects *o, objects *other, ZeppelinRng *rng) {
  const uint32_t n = o->info.n, k = o->info.k, p = o->preset;
  uint8_t seed[32] = {1};
  size_t len;
  uint32_t u32;
  void *h = NULL;
  /* init: NULL, short, misaligned, unknown preset */
  uint8_t *raw = storage(o->ct_size + 16);
  IS(zeppelin_ciphertext_init(p, NULL, o->ct_size, (ZeppelinCiphertext **)&h), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_ciphertext_init(p, raw, o->ct_size, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_ciphertext_init(p, raw, o->ct_size - 1, (ZeppelinCiphertext **)&h), ZEPPELIN_STATUS_STORAGE_TOO_SMALL);
  IS(zeppelin_ciphertext_init(p, raw + 4, o->ct_size, (ZeppelinCiphertext **)&h), ZEPPELIN_STATUS_MISALIGNED);
  uint32_t bad_presets[] = {0, 3, 0xFFFFFFFFu};
  for (int i = 0; i < 3; i++) {
    IS(zeppelin_secret_key_init(bad_presets[i], raw, o->ct_size, (ZeppelinSecretKey **)&h), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_public_key_init(bad_presets[i], raw, o->ct_size, (ZeppelinPublicKey **)&h), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_seeded_ciphertext_init(bad_presets[i], raw, o->ct_size, (ZeppelinSeededCiphertext **)&h), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_plaintext_init(bad_presets[i], raw, o->ct_size, (ZeppelinPlaintext **)&h), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_workspace_init(bad_presets[i], raw, o->ct_size, (ZeppelinWorkspace **)&h), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    ZeppelinPresetInfo info;
    IS(zeppelin_preset_info(bad_presets[i], &info), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_wire_full_len(bad_presets[i], 1, &len), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_quantize(bad_presets[i], 8, NULL, 0, slots, n), ZEPPELIN_STATUS_UNKNOWN_PRESET);
  }
  IS(zeppelin_preset_info(p, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  /* garbage handles: random bytes, a handle of another kind, of another preset, misaligned */
  for (int round = 0; round < 50; round++) {
    fill_random(raw, o->ct_size);
    ZeppelinSecretKey *g = (ZeppelinSecretKey *)raw;
    IS(zeppelin_keygen_secret(g, seed), ZEPPELIN_STATUS_BAD_OBJECT);
    IS(zeppelin_decrypt(g, (ZeppelinCiphertext *)raw, (ZeppelinPlaintext *)raw, (ZeppelinWorkspace *)raw), ZEPPELIN_STATUS_BAD_OBJECT);
    IS(zeppelin_object_destroy(raw), ZEPPELIN_STATUS_BAD_OBJECT);
  }
  IS(zeppelin_keygen_secret((ZeppelinSecretKey *)o->pk, seed), ZEPPELIN_STATUS_BAD_OBJECT);
  IS(zeppelin_keygen_secret((ZeppelinSecretKey *)((uint8_t *)o->sk + 1), seed), ZEPPELIN_STATUS_MISALIGNED);
  IS(zeppelin_keygen_secret(NULL, seed), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_keygen_secret(o->sk, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_decrypt(o->sk, other->ct, o->pt, o->ws), ZEPPELIN_STATUS_PRESET_MISMATCH);
  IS(zeppelin_encrypt_seeded(o->sk, other->pt, k, seed, seed, o->sct, o->ws), ZEPPELIN_STATUS_PRESET_MISMATCH);
  IS(zeppelin_keygen_public(o->sk, o->pk, other->ws, seed, seed), ZEPPELIN_STATUS_PRESET_MISMATCH);
  IS(zeppelin_expand_seeded(o->sct, other->ct), ZEPPELIN_STATUS_PRESET_MISMATCH);
  /* a key never generated; empty ciphertexts */
  ZeppelinSecretKey *empty;
  void *empty_m = storage(o->sk_size);
  OK(zeppelin_secret_key_init(p, empty_m, o->sk_size, &empty));
  IS(zeppelin_encrypt_seeded(empty, o->pt, k, seed, seed, o->sct, o->ws), ZEPPELIN_STATUS_KEY_NOT_SET);
  IS(zeppelin_secret_key_write(empty, wire, sizeof wire, &len), ZEPPELIN_STATUS_KEY_NOT_SET);
  IS(zeppelin_secret_key_write_ntt(empty, wire, sizeof wire, &len), ZEPPELIN_STATUS_KEY_NOT_SET);
  IS(zeppelin_keygen_public(empty, o->pk, o->ws, seed, seed), ZEPPELIN_STATUS_KEY_NOT_SET);
  ZeppelinCiphertext *ect;
  OK(zeppelin_ciphertext_init(p, raw, o->ct_size, &ect));
  IS(zeppelin_decrypt(o->sk, ect, o->pt, o->ws), ZEPPELIN_STATUS_LEVEL);
  IS(zeppelin_ciphertext_write_wire(ect, wire, sizeof wire, &len), ZEPPELIN_STATUS_WIRE_PARMS_ID);
  IS(zeppelin_noise_budget(o->sk, ect, o->ws, scratch, n, &u32), ZEPPELIN_STATUS_LEVEL);
  OK(zeppelin_object_destroy(ect));
  IS(zeppelin_object_destroy(ect), ZEPPELIN_STATUS_BAD_OBJECT); /* destroyed: refused */
  IS(zeppelin_object_destroy(NULL), ZEPPELIN_STATUS_NULL_POINTER);
  OK(zeppelin_object_destroy(empty));
  free(empty_m);
  /* levels */
  uint32_t bad_levels[] = {0, k + 1, 0xFFFFFFFFu};
  for (int i = 0; i < 3; i++) {
    IS(zeppelin_encrypt_seeded(o->sk, o->pt, bad_levels[i], seed, seed, o->sct, o->ws), ZEPPELIN_STATUS_LEVEL);
    IS(zeppelin_encrypt_symmetric(o->sk, o->pt, bad_levels[i], seed, seed, o->ct, o->ws), ZEPPELIN_STATUS_LEVEL);
    IS(zeppelin_encrypt_public(o->pk, o->pt, bad_levels[i], seed, o->ct, o->ws), ZEPPELIN_STATUS_LEVEL);
    IS(zeppelin_wire_seeded_len(p, bad_levels[i], &len), ZEPPELIN_STATUS_LEVEL);
    IS(zeppelin_ciphertext_read(o->ct, bad_levels[i], wire, 64), ZEPPELIN_STATUS_LEVEL);
    IS(zeppelin_seeded_ciphertext_read(o->sct, bad_levels[i], wire, 64), ZEPPELIN_STATUS_LEVEL);
  }
  /* NULL seeds and outputs */
  IS(zeppelin_encrypt_seeded(o->sk, o->pt, k, NULL, seed, o->sct, o->ws), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_encrypt_symmetric(o->sk, o->pt, k, seed, NULL, o->ct, o->ws), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_encrypt_public(o->pk, o->pt, k, NULL, o->ct, o->ws), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_encrypt_seeded_random(o->sk, o->pt, k, NULL, o->sct, o->ws), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_encrypt_symmetric_random(o->sk, o->pt, k, NULL, o->ct, o->ws), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_encrypt_public_random(o->pk, o->pt, k, NULL, o->ct, o->ws), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_keygen_secret_random(o->sk, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_keygen_public_random(o->sk, o->pk, o->ws, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_decrypt_seeded(o->sk, o->sct, NULL, o->ws), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_ciphertext_level(o->ct, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_noise_budget(o->sk, o->ct, o->ws, scratch, n * k, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_wire_full_len(p, 1, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  /* encoding and fixed point */
  for (uint32_t i = 0; i < n; i++) slots[i] = i % o->info.t;
  slots[17] = o->info.t;
  IS(zeppelin_encode(slots, n, o->pt), ZEPPELIN_STATUS_PLAINTEXT_RANGE);
  IS(zeppelin_encode(slots, n + 1, o->pt), ZEPPELIN_STATUS_LENGTH);
  IS(zeppelin_encode(NULL, 5, o->pt), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_encode((const uint32_t *)((uint8_t *)slots + 1), 5, o->pt), ZEPPELIN_STATUS_MISALIGNED);
  IS(zeppelin_decode(o->pt, back, n - 1), ZEPPELIN_STATUS_LENGTH);
  IS(zeppelin_decode(o->pt, NULL, n), ZEPPELIN_STATUS_NULL_POINTER);
  double bad_values[] = {NAN, INFINITY, -INFINITY, 1e300, 40000.0};
  for (int i = 0; i < 5; i++) IS(zeppelin_quantize(p, 0, &bad_values[i], 1, slots, n), ZEPPELIN_STATUS_FIXED_POINT_RANGE);
  IS(zeppelin_quantize(p, 53, bad_values, 1, slots, n), ZEPPELIN_STATUS_FIXED_POINT_SCALE);
  IS(zeppelin_quantize(p, 8, bad_values, 5, slots, 4), ZEPPELIN_STATUS_LENGTH);
  double outv[2];
  uint32_t big[2] = {0, o->info.t};
  IS(zeppelin_dequantize(p, 8, big, 2, outv), ZEPPELIN_STATUS_PLAINTEXT_RANGE);
  IS(zeppelin_dequantize(p, 60, big, 1, outv), ZEPPELIN_STATUS_FIXED_POINT_SCALE);
  IS(zeppelin_dequantize(p, 8, big, 1, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  /* short output buffers for every writer */
  OK(zeppelin_keygen_secret_random(o->sk, rng));
  OK(zeppelin_keygen_public_random(o->sk, o->pk, o->ws, rng));
  for (uint32_t i = 0; i < n; i++) slots[i] = i % o->info.t;
  OK(zeppelin_encode(slots, n, o->pt));
  OK(zeppelin_encrypt_seeded_random(o->sk, o->pt, k, rng, o->sct, o->ws));
  OK(zeppelin_encrypt_symmetric_random(o->sk, o->pt, k, rng, o->ct, o->ws));
  size_t shorts[] = {0, 1, 7, 100, 4095};
  for (int i = 0; i < 5; i++) {
    size_t s = shorts[i];
    IS(zeppelin_secret_key_write(o->sk, wire, s, &len), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_secret_key_write_ntt(o->sk, wire, s, &len), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_public_key_write(o->pk, wire, s, &len), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_ciphertext_write(o->ct, wire, s, &len), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_seeded_ciphertext_write(o->sct, wire, s, &len), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_ciphertext_write_wire(o->ct, wire, s, &len), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_seeded_ciphertext_write_wire(o->sct, wire, s, &len), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
  }
  IS(zeppelin_ciphertext_write(o->ct, NULL, 1 << 20, &len), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_noise_budget(o->sk, o->ct, o->ws, scratch, n * k - 1, &u32), ZEPPELIN_STATUS_LENGTH);
  /* garbage bytes into every reader, random lengths; the objects stay usable */
  size_t wire_len = 0, seeded_len = 0;
  OK(zeppelin_wire_full_len(p, k, &wire_len));
  OK(zeppelin_wire_seeded_len(p, k, &seeded_len));
  for (int round = 0; round < 300; round++) {
    size_t l = (size_t)(next_byte() | next_byte() << 8 | (next_byte() & 3) << 16) % (wire_len + 64);
    if (round % 10 == 0) l = (round / 10) % 2 ? wire_len : seeded_len;
    fill_random(wire, l);
    ERR(zeppelin_ciphertext_read_wire(o->ct2, wire, l));
    ERR(zeppelin_seeded_ciphertext_read_wire(o->sct, wire, l));
    ERR(zeppelin_public_key_read(o->pk, wire, l));
    ERR(zeppelin_ciphertext_read(o->ct2, 1 + round % k, wire, l));
    ERR(zeppelin_secret_key_read(o->sk, wire, l < n ? l : n)); /* random bytes are not ternary */
  }
  /* single-byte mutations of a valid wire form: parsed or refused, never a crash */
  size_t valid_len;
  OK(zeppelin_ciphertext_write_wire(o->ct, wire2, sizeof wire2, &valid_len));
  int refused = 0;
  for (int round = 0; round < 300; round++) {
    memcpy(wire, wire2, valid_len);
    size_t at = round < 113 ? (size_t)round : (size_t)(next_byte() | next_byte() << 8 | next_byte() << 16) % valid_len;
    wire[at] ^= (uint8_t)(1 + next_byte() % 255);
    refused += zeppelin_ciphertext_read_wire(o->ct2, wire, valid_len) != ZEPPELIN_STATUS_OK;
  }
  EXPECT(refused >= 100); /* every header byte's mutation is refused */
  OK(zeppelin_decrypt(o->sk, o->ct, o->pt, o->ws)); /* still usable */
  OK(zeppelin_decode(o->pt, back, n));
  EXPECT(memcmp(back, slots, n * 4) == 0);
  /* a degenerate public key and a zero secret key are refused by the readers */
  memset(wire, 0, sizeof wire);
  OK(zeppelin_public_key_write(o->pk, wire2, sizeof wire2, &len));
  IS(zeppelin_public_key_read(o->pk, wire, len), ZEPPELIN_STATUS_DEGENERATE_PUBLIC_KEY);
  IS(zeppelin_secret_key_read(o->sk, wire, n), ZEPPELIN_STATUS_INVALID_KEY);
  IS(zeppelin_secret_key_read(o->sk, wire, n + 1), ZEPPELIN_STATUS_LENGTH);
  IS(zeppelin_secret_key_read(o->sk, NULL, n), ZEPPELIN_STATUS_NULL_POINTER);
  free(raw);
}

static void invalid_rblwe(ZeppelinRng *rng) {
  uint8_t seed[32] = {3}, pk[1024], sk[64], ct[1024], msg[64] = {0}, csk[ZEPPELIN_RBLWE_MAX_CCA_SECRET_KEY_BYTES];
  uint8_t cct[ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES], junk[2048];
  ZeppelinRblweSizes z;
  uint64_t mk_mem[(ZEPPELIN_RBLWE_MASKED_KEY_SIZE + 7) / 8], cmk_mem[(ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE + 7) / 8];
  ZeppelinRblweMaskedKey *mk;
  ZeppelinRblweCcaMaskedKey *cmk;
  uint32_t bad_sets[] = {0, 4, 0xFFFFFFFFu};
  for (int i = 0; i < 3; i++) {
    IS(zeppelin_rblwe_sizes(bad_sets[i], &z), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_rblwe_cpa_keygen(bad_sets[i], seed, rng, pk, sizeof pk, sk, sizeof sk), ZEPPELIN_STATUS_UNKNOWN_PRESET);
    IS(zeppelin_rblwe_public_parameter(bad_sets[i], seed, junk, sizeof junk), ZEPPELIN_STATUS_UNKNOWN_PRESET);
  }
  IS(zeppelin_rblwe_sizes(1, NULL), ZEPPELIN_STATUS_NULL_POINTER);
  for (uint32_t set = 1; set <= 3; set++) {
    OK(zeppelin_rblwe_sizes(set, &z));
    IS(zeppelin_rblwe_cpa_keygen(set, NULL, rng, pk, sizeof pk, sk, sizeof sk), ZEPPELIN_STATUS_NULL_POINTER);
    IS(zeppelin_rblwe_cpa_keygen(set, seed, NULL, pk, sizeof pk, sk, sizeof sk), ZEPPELIN_STATUS_NULL_POINTER);
    IS(zeppelin_rblwe_cpa_keygen(set, seed, rng, pk, z.public_key - 1, sk, sizeof sk), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_rblwe_cpa_keygen(set, seed, rng, pk, sizeof pk, sk, z.secret_key - 1), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_rblwe_public_parameter(set, seed, junk, z.public_parameter - 1), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    OK(zeppelin_rblwe_cpa_keygen(set, seed, rng, pk, sizeof pk, sk, sizeof sk));
    IS(zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key, msg, z.message - 1, rng, ct, sizeof ct), ZEPPELIN_STATUS_LENGTH);
    IS(zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key - 1, msg, z.message, rng, ct, sizeof ct), ZEPPELIN_STATUS_LENGTH);
    IS(zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key, msg, z.message, rng, ct, z.ciphertext - 1), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    memset(junk, 0, sizeof junk);
    IS(zeppelin_rblwe_cpa_encrypt(set, junk, z.public_key, msg, z.message, rng, ct, sizeof ct), ZEPPELIN_STATUS_DEGENERATE_PUBLIC_KEY);
    IS(zeppelin_rblwe_cpa_decrypt(set, junk, z.secret_key, ct, z.ciphertext, msg, sizeof msg), ZEPPELIN_STATUS_INVALID_KEY);
    IS(zeppelin_rblwe_cpa_decrypt(set, sk, z.secret_key, ct, z.ciphertext, msg, z.message - 1), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_rblwe_masked_key_init(set, mk_mem, sizeof mk_mem, junk, z.secret_key, rng, &mk), ZEPPELIN_STATUS_INVALID_KEY);
    IS(zeppelin_rblwe_masked_key_init(set, mk_mem, 16, sk, z.secret_key, rng, &mk), ZEPPELIN_STATUS_STORAGE_TOO_SMALL);
    IS(zeppelin_rblwe_masked_keygen(set, seed, rng, pk, sizeof pk, mk_mem, 16, &mk), ZEPPELIN_STATUS_STORAGE_TOO_SMALL);
    IS(zeppelin_rblwe_cca_masked_keygen(set, seed, rng, pk, sizeof pk, cmk_mem, 16, &cmk), ZEPPELIN_STATUS_STORAGE_TOO_SMALL);
    IS(zeppelin_rblwe_cca_masked_key_init(set, cmk_mem, sizeof cmk_mem, junk, z.cca_secret_key, rng, &cmk), ZEPPELIN_STATUS_INVALID_KEY);
    if (set != 2) {
      memset(junk, 0xFF, sizeof junk); /* q = 256 accepts any byte; the ciphertext decrypts to something */
    } else {
      memset(junk, 0xFF, sizeof junk); /* q = 128: bytes >= 128 are out of range */
      IS(zeppelin_rblwe_cpa_decrypt(set, sk, z.secret_key, junk, z.ciphertext, msg, sizeof msg), ZEPPELIN_STATUS_COEFFICIENT_RANGE);
      IS(zeppelin_rblwe_cca_decrypt(set, csk, z.cca_secret_key, junk, z.cca_ciphertext, rng, msg, sizeof msg), ZEPPELIN_STATUS_COEFFICIENT_RANGE);
    }
    for (int round = 0; round < 40; round++) {
      fill_random(junk, sizeof junk);
      size_t l = next_byte() % 2 ? z.cca_secret_key : (size_t)next_byte() * 5;
      ERR(zeppelin_rblwe_cca_decrypt(set, junk, l, cct, z.cca_ciphertext, rng, msg, sizeof msg));
      /* random bytes of the right length are a valid q = 256 public key: only wrong lengths
         (and, for q = 128, bytes >= 128) must be refused */
      ZeppelinStatus s = zeppelin_rblwe_cpa_encrypt(set, junk, l % 2 ? z.public_key : l, msg, z.message, rng, ct, sizeof ct);
      if (!(l % 2) && l != z.public_key) IS(s, ZEPPELIN_STATUS_LENGTH);
      if (set == 2 && l % 2) IS(s, ZEPPELIN_STATUS_COEFFICIENT_RANGE);
      ERR(zeppelin_rblwe_masked_decrypt((ZeppelinRblweMaskedKey *)mk_mem, junk, z.ciphertext, rng, msg, sizeof msg));
    }
    /* masked keys: wrong kind, short buffers, then a good round trip */
    OK(zeppelin_rblwe_masked_key_init(set, mk_mem, sizeof mk_mem, sk, z.secret_key, rng, &mk));
    OK(zeppelin_rblwe_cca_keygen(set, seed, rng, pk, sizeof pk, csk, sizeof csk));
    OK(zeppelin_rblwe_cca_masked_key_init(set, cmk_mem, sizeof cmk_mem, csk, z.cca_secret_key, rng, &cmk));
    OK(zeppelin_rblwe_cca_encrypt(set, pk, z.public_key, msg, z.message, rng, cct, sizeof cct));
    IS(zeppelin_rblwe_cca_encrypt(set, pk, z.public_key, msg, z.message, rng, cct, z.cca_ciphertext - 1), ZEPPELIN_STATUS_BUFFER_TOO_SMALL);
    IS(zeppelin_rblwe_masked_decrypt((ZeppelinRblweMaskedKey *)cmk, ct, z.ciphertext, rng, msg, sizeof msg), ZEPPELIN_STATUS_BAD_OBJECT);
    IS(zeppelin_rblwe_cca_masked_decrypt((ZeppelinRblweCcaMaskedKey *)mk, cct, z.cca_ciphertext, rng, msg, sizeof msg), ZEPPELIN_STATUS_BAD_OBJECT);
    IS(zeppelin_rblwe_cca_masked_decrypt(cmk, cct, z.cca_ciphertext - 1, rng, msg, sizeof msg), ZEPPELIN_STATUS_LENGTH);
    IS(zeppelin_rblwe_masked_decrypt(mk, ct, z.ciphertext, NULL, msg, sizeof msg), ZEPPELIN_STATUS_NULL_POINTER);
    IS(zeppelin_rblwe_cca_masked_decrypt(cmk, cct, z.cca_ciphertext, rng, NULL, sizeof msg), ZEPPELIN_STATUS_NULL_POINTER);
    OK(zeppelin_object_destroy(mk));
    OK(zeppelin_object_destroy(cmk));
    IS(zeppelin_rblwe_masked_decrypt(mk, ct, z.ciphertext, rng, msg, sizeof msg), ZEPPELIN_STATUS_BAD_OBJECT);
  }
}

static void rblwe_round_trips(ZeppelinRng *rng) {
  uint8_t seed[32], pk[1024], sk[64], ct[1024], msg[64], dec[64], csk[ZEPPELIN_RBLWE_MAX_CCA_SECRET_KEY_BYTES];
  uint8_t cct[ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES];
  uint64_t mk_mem[(ZEPPELIN_RBLWE_MASKED_KEY_SIZE + 7) / 8], cmk_mem[(ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE + 7) / 8];
  ZeppelinRblweMaskedKey *mk;
  ZeppelinRblweCcaMaskedKey *cmk;
  ZeppelinRblweSizes z;
  for (uint32_t set = 1; set <= 3; set++) {
    OK(zeppelin_rblwe_sizes(set, &z));
    for (int round = 0; round < 4; round++) {
      OK(zeppelin_rng_fill(rng, seed, 32));
      OK(zeppelin_rng_fill(rng, msg, z.message));
      OK(zeppelin_rblwe_cpa_keygen(set, seed, rng, pk, sizeof pk, sk, sizeof sk));
      OK(zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key, msg, z.message, rng, ct, sizeof ct));
      OK(zeppelin_rblwe_cpa_decrypt(set, sk, z.secret_key, ct, z.ciphertext, dec, sizeof dec));
      if (set != 2) EXPECT(memcmp(dec, msg, z.message) == 0); /* set 2 has per-bit failure 2^-10 */
      OK(zeppelin_rblwe_masked_keygen(set, seed, rng, pk, sizeof pk, mk_mem, sizeof mk_mem, &mk));
      OK(zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key, msg, z.message, rng, ct, sizeof ct));
      OK(zeppelin_rblwe_masked_decrypt(mk, ct, z.ciphertext, rng, dec, sizeof dec));
      if (set != 2) EXPECT(memcmp(dec, msg, z.message) == 0);
      OK(zeppelin_object_destroy(mk));
      OK(zeppelin_rblwe_cca_masked_keygen(set, seed, rng, pk, sizeof pk, cmk_mem, sizeof cmk_mem, &cmk));
      OK(zeppelin_rblwe_cca_encrypt(set, pk, z.public_key, msg, z.message, rng, cct, sizeof cct));
      OK(zeppelin_rblwe_cca_masked_decrypt(cmk, cct, z.cca_ciphertext, rng, dec, sizeof dec));
      if (set != 2) EXPECT(memcmp(dec, msg, z.message) == 0);
      OK(zeppelin_object_destroy(cmk));
      OK(zeppelin_rblwe_cca_keygen(set, seed, rng, pk, sizeof pk, csk, sizeof csk));
      OK(zeppelin_rblwe_cca_encrypt(set, pk, z.public_key, msg, z.message, rng, cct, sizeof cct));
      OK(zeppelin_rblwe_cca_decrypt(set, csk, z.cca_secret_key, cct, z.cca_ciphertext, rng, dec, sizeof dec));
      if (set != 2) EXPECT(memcmp(dec, msg, z.message) == 0);
      /* the key object decrypts exactly as the bytes do, tampered ciphertexts included */
      uint64_t ck_mem[(ZEPPELIN_RBLWE_CCA_KEY_SIZE + 7) / 8];
      ZeppelinRblweCcaKey *ck;
      uint8_t dec2[64];
      OK(zeppelin_rblwe_cca_key_init(set, ck_mem, sizeof ck_mem, csk, z.cca_secret_key, &ck));
      OK(zeppelin_rblwe_cca_key_decrypt(ck, cct, z.cca_ciphertext, rng, dec2, sizeof dec2));
      EXPECT(memcmp(dec2, dec, z.message) == 0);
      cct[round] ^= 1;
      OK(zeppelin_rblwe_cca_decrypt(set, csk, z.cca_secret_key, cct, z.cca_ciphertext, rng, dec, sizeof dec));
      OK(zeppelin_rblwe_cca_key_decrypt(ck, cct, z.cca_ciphertext, rng, dec2, sizeof dec2));
      EXPECT(memcmp(dec2, dec, z.message) == 0);
      if (set != 2) EXPECT(memcmp(dec2, msg, z.message) != 0); /* implicit rejection */
      IS(zeppelin_rblwe_cca_key_decrypt((ZeppelinRblweCcaKey *)mk_mem, cct, z.cca_ciphertext, rng, dec2, sizeof dec2), ZEPPELIN_STATUS_BAD_OBJECT);
      IS(zeppelin_rblwe_cca_key_decrypt(ck, cct, z.cca_ciphertext - 1, rng, dec2, sizeof dec2), ZEPPELIN_STATUS_LENGTH);
      IS(zeppelin_rblwe_cca_key_init(set, ck_mem, 64, csk, z.cca_secret_key, &ck), ZEPPELIN_STATUS_STORAGE_TOO_SMALL);
      OK(zeppelin_object_destroy(ck));
      IS(zeppelin_rblwe_cca_key_decrypt(ck, cct, z.cca_ciphertext, rng, dec2, sizeof dec2), ZEPPELIN_STATUS_BAD_OBJECT);
    }
  }
}

static bfv_kat_files files_of(const char *root, const char *preset) {
  bfv_kat_files f;
  char rel[256];
#define LOAD(field, name) snprintf(rel, sizeof rel, "crates/zeppelin/tests/kats/%s/" name, preset); f.field = load(root, rel, &f.field##_len)
  LOAD(sk, "sk.bin"); LOAD(sk_ntt, "sk_ntt.bin"); LOAD(pk, "pk.bin");
  LOAD(ct_seeded, "ct_seeded.bin"); LOAD(ct_symmetric, "ct_symmetric.bin"); LOAD(ct_public, "ct_public.bin");
#undef LOAD
  return f;
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  printf("zeppelin host C test: %s\n", zeppelin_version());

  /* status names */
  for (int code = 0; code <= 28; code++) {
    const char *s = zeppelin_strerror(code);
    EXPECT(s != NULL && strlen(s) > 1 && strcmp(s, "unknown status code") != 0);
    for (int other = 0; other < code; other++) EXPECT(strcmp(s, zeppelin_strerror(other)) != 0);
  }
  EXPECT(strcmp(zeppelin_strerror(-1), "unknown status code") == 0);
  EXPECT(strcmp(zeppelin_strerror(29), "unknown status code") == 0);
  group("zeppelin_strerror names every status code");

  bfv_kat_files seal = files_of(root, "seal4096"), zep = files_of(root, "zeppelin4096");
  run_bfv_kats(ZEPPELIN_PRESET_SEAL4096, "seal4096 (software AES)", &seal, report, NULL);
  run_bfv_kats(ZEPPELIN_PRESET_ZEPPELIN4096, "zeppelin4096 (software AES)", &zep, report, NULL);

  /* OpenSSL's AES-128-CTR as the board keystream: the same bytes */
  evp = EVP_CIPHER_CTX_new();
  ZeppelinKeystream ks = {NULL, ossl_start, ossl_fill}, half = {NULL, ossl_start, NULL};
  IS(zeppelin_set_public_keystream(&half), ZEPPELIN_STATUS_NULL_POINTER);
  OK(zeppelin_set_public_keystream(&ks));
  group("keystream registration");
  run_bfv_kats(ZEPPELIN_PRESET_SEAL4096, "seal4096 (OpenSSL AES-CTR public stream callback)", &seal, report, NULL);
  run_bfv_kats(ZEPPELIN_PRESET_ZEPPELIN4096, "zeppelin4096 (OpenSSL AES-CTR public stream callback)", &zep, report, NULL);

  /* a failing keystream: error, output wiped */
  static uint64_t rng_mem[(ZEPPELIN_RNG_SIZE + 7) / 8], bad_rng_mem[(ZEPPELIN_RNG_SIZE + 7) / 8];
  ZeppelinRng *rng, *bad_rng;
  OK(zeppelin_rng_init(rng_mem, sizeof rng_mem, test_entropy, NULL, &rng));
  OK(zeppelin_rng_init(bad_rng_mem, sizeof bad_rng_mem, failing_entropy, NULL, &bad_rng));
  IS(zeppelin_rng_init(rng_mem, sizeof rng_mem, NULL, NULL, &rng), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_rng_init(rng_mem, 8, test_entropy, NULL, &rng), ZEPPELIN_STATUS_STORAGE_TOO_SMALL);
  OK(zeppelin_rng_prefetch(rng));
  objects o, other;
  make(&o, ZEPPELIN_PRESET_SEAL4096);
  make(&other, ZEPPELIN_PRESET_ZEPPELIN4096);
  OK(zeppelin_keygen_secret_random(o.sk, rng));
  OK(zeppelin_encode(slots, 0, o.pt));
  keystream_fail = 1;
  size_t len;
  IS(zeppelin_encrypt_seeded_random(o.sk, o.pt, 3, rng, o.sct, o.ws), ZEPPELIN_STATUS_KEYSTREAM);
  IS(zeppelin_seeded_ciphertext_write(o.sct, wire, sizeof wire, &len), ZEPPELIN_STATUS_LEVEL); /* wiped */
  IS(zeppelin_encrypt_symmetric_random(o.sk, o.pt, 3, rng, o.ct, o.ws), ZEPPELIN_STATUS_KEYSTREAM);
  IS(zeppelin_ciphertext_write(o.ct, wire, sizeof wire, &len), ZEPPELIN_STATUS_LEVEL);
  IS(zeppelin_keygen_public_random(o.sk, o.pk, o.ws, rng), ZEPPELIN_STATUS_KEYSTREAM);
  IS(zeppelin_public_key_write(o.pk, wire, sizeof wire, &len), ZEPPELIN_STATUS_KEY_NOT_SET);
  keystream_fail = 0;
  OK(zeppelin_set_public_keystream(NULL));
  /* a failing TRNG */
  IS(zeppelin_keygen_secret_random(o.sk, bad_rng), ZEPPELIN_STATUS_ENTROPY);
  IS(zeppelin_rng_prefetch(bad_rng), ZEPPELIN_STATUS_ENTROPY);
  IS(zeppelin_rng_fill(bad_rng, wire, 10), ZEPPELIN_STATUS_ENTROPY);
  IS(zeppelin_rblwe_cpa_keygen(1, wire, bad_rng, wire, 512, wire + 512, 32), ZEPPELIN_STATUS_ENTROPY);
  IS(zeppelin_rng_fill(rng, NULL, 10), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_rng_fill((ZeppelinRng *)o.sk, wire, 10), ZEPPELIN_STATUS_BAD_OBJECT);
  EXPECT(zeppelin_kat_entropy_fill(o.sk, wire, 10) == ZEPPELIN_STATUS_BAD_OBJECT);
  EXPECT(zeppelin_kat_entropy_fill(NULL, wire, 10) == ZEPPELIN_STATUS_NULL_POINTER);
  static uint64_t kat_mem[(ZEPPELIN_KAT_ENTROPY_SIZE + 7) / 8];
  ZeppelinKatEntropy *kat;
  IS(zeppelin_kat_entropy_init(kat_mem, sizeof kat_mem, NULL, 4, &kat), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_kat_entropy_init(kat_mem, 16, (const uint8_t *)"set1", 4, &kat), ZEPPELIN_STATUS_STORAGE_TOO_SMALL);
  IS(zeppelin_kat_entropy_init((uint8_t *)kat_mem + 2, sizeof kat_mem - 8, (const uint8_t *)"set1", 4, &kat), ZEPPELIN_STATUS_MISALIGNED);
  OK(zeppelin_kat_entropy_init(kat_mem, sizeof kat_mem, (const uint8_t *)"set1", 4, &kat));
  EXPECT(zeppelin_kat_entropy_fill(kat, NULL, 10) == ZEPPELIN_STATUS_NULL_POINTER);
  EXPECT(zeppelin_kat_entropy_fill(kat, wire, 10) == 0);
  OK(zeppelin_object_destroy(kat));
  IS(zeppelin_rng_prefetch((ZeppelinRng *)o.pt), ZEPPELIN_STATUS_BAD_OBJECT);
  IS(zeppelin_rng_prefetch(NULL), ZEPPELIN_STATUS_NULL_POINTER);
  IS(zeppelin_set_public_keystream((const ZeppelinKeystream *)((uint8_t *)&ks + 1)), ZEPPELIN_STATUS_MISALIGNED);
  group("failing keystream and TRNG callbacks: errors, outputs wiped");

  /* RBLWE KATs */
  const char *sets[] = {"set1", "set2", "set3"};
  for (uint32_t set = 1; set <= 3; set++) {
    char rel[128], label[64];
    size_t klen;
    snprintf(rel, sizeof rel, "crates/rblwe/tests/kats/%s.kat", sets[set - 1]);
    snprintf(label, sizeof label, "rblwe %s", sets[set - 1]);
    uint8_t *kat = load(root, rel, &klen);
    run_rblwe_kat(set, label, kat, klen, report, NULL);
    free(kat);
  }

  round_trips(&o, rng);
  group("seal4096 round trips (every path and level, wire forms, noise budget, fixed point)");
  round_trips(&other, rng);
  group("zeppelin4096 round trips (every path and level, wire forms, noise budget, fixed point)");
  rblwe_round_trips(rng);
  group("rblwe round trips (CPA, CCA2 from bytes and key object, masked, sets 1-3)");
  invalid_bfv(&o, &other, rng);
  group("seal4096 invalid inputs refused with status codes");
  invalid_bfv(&other, &o, rng);
  group("zeppelin4096 invalid inputs refused with status codes");
  invalid_rblwe(rng);
  group("rblwe invalid inputs refused with status codes");
  const uint8_t *bufs[] = {seal.sk, seal.sk_ntt, seal.pk, seal.ct_seeded, seal.ct_symmetric, seal.ct_public,
                           zep.sk, zep.sk_ntt, zep.pk, zep.ct_seeded, zep.ct_symmetric, zep.ct_public};
  for (int i = 0; i < 12; i++) free((void *)bufs[i]);
  unmake(&o);
  unmake(&other);
  OK(zeppelin_object_destroy(rng));
  OK(zeppelin_object_destroy(bad_rng));
  group("objects destroyed");
  EVP_CIPHER_CTX_free(evp);
  printf("RESULT %d passed, %d failed\n", passes, fails);
  return fails != 0;
}
