/* The KAT scripts through the C ABI (see kats.h): the same fixed seeds as zeppelin::kat and
 * the same operation order as rblwe::kat::generate, compared byte for byte with the files
 * the Rust tests pin. */
#include "kats.h"

#include <string.h>

#include "zeppelin.h"

/* One storage set sized for the larger preset (Zeppelin4096), reused by both. */
#define STORE(name, size) static uint64_t name[((size) + 7) / 8]
STORE(sk_mem, ZEPPELIN_ZEPPELIN4096_SECRET_KEY_SIZE);
STORE(pk_mem, ZEPPELIN_ZEPPELIN4096_PUBLIC_KEY_SIZE);
STORE(ct_mem, ZEPPELIN_ZEPPELIN4096_CIPHERTEXT_SIZE);
STORE(sct_mem, ZEPPELIN_ZEPPELIN4096_SEEDED_CIPHERTEXT_SIZE);
STORE(pt_mem, ZEPPELIN_PLAINTEXT_SIZE);
STORE(ws_mem, ZEPPELIN_WORKSPACE_SIZE);
static uint8_t buf[2 * 4 * 4096 * 4];
static uint32_t slots[ZEPPELIN_SLOTS], out[ZEPPELIN_SLOTS];

static void counting_seed(uint8_t seed[32], uint8_t first) {
  for (int i = 0; i < 32; i++) seed[i] = (uint8_t)(first + i);
}

static void start(const kat_meter *m) {
  if (m && m->start) m->start();
}
static void stop(const kat_meter *m, const char *op) {
  if (m && m->stop) m->stop(op);
}

static size_t first_diff; /* of the last failed comparison, for the report */
static ZeppelinStatus last_status;
static int same(ZeppelinStatus st, size_t written, const uint8_t *file, size_t len) {
  last_status = st;
  first_diff = 0;
  while (first_diff < len && first_diff < written && buf[first_diff] == file[first_diff]) first_diff++;
  return st == ZEPPELIN_STATUS_OK && written == len && memcmp(buf, file, len) == 0;
}

static char name_buf[128];
static const char *name3(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la + lb + 1 >= sizeof name_buf) lb = sizeof name_buf - la - 2;
  memcpy(name_buf, a, la);
  name_buf[la] = ' ';
  memcpy(name_buf + la + 1, b, lb);
  name_buf[la + 1 + lb] = 0;
  return name_buf;
}

int run_bfv_kats(uint32_t preset, const char *label, const bfv_kat_files *f,
                 kat_report_fn report, const kat_meter *m) {
  int fails = 0, ok;
  ZeppelinSecretKey *sk;
  ZeppelinPublicKey *pk;
  ZeppelinCiphertext *ct;
  ZeppelinSeededCiphertext *sct;
  ZeppelinPlaintext *pt;
  ZeppelinWorkspace *ws;
  ZeppelinPresetInfo info;
  uint8_t seed_a[32], seed_e[32];
  size_t written = 0;
  ZeppelinStatus st;
#define CHECK(what, cond) do { ok = (cond); fails += !ok; report(name3(label, what), ok); } while (0)

  st = zeppelin_preset_info(preset, &info);
  CHECK("objects", st == ZEPPELIN_STATUS_OK &&
        zeppelin_secret_key_init(preset, sk_mem, sizeof sk_mem, &sk) == ZEPPELIN_STATUS_OK &&
        zeppelin_public_key_init(preset, pk_mem, sizeof pk_mem, &pk) == ZEPPELIN_STATUS_OK &&
        zeppelin_ciphertext_init(preset, ct_mem, sizeof ct_mem, &ct) == ZEPPELIN_STATUS_OK &&
        zeppelin_seeded_ciphertext_init(preset, sct_mem, sizeof sct_mem, &sct) == ZEPPELIN_STATUS_OK &&
        zeppelin_plaintext_init(preset, pt_mem, sizeof pt_mem, &pt) == ZEPPELIN_STATUS_OK &&
        zeppelin_workspace_init(preset, ws_mem, sizeof ws_mem, &ws) == ZEPPELIN_STATUS_OK);
  if (!ok) return fails;

  counting_seed(seed_e, 0x00);
  start(m);
  st = zeppelin_keygen_secret(sk, seed_e);
  stop(m, "keygen (secret key)");
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_secret_key_write(sk, buf, sizeof buf, &written);
  CHECK("KAT sk.bin", same(st, written, f->sk, f->sk_len));
  st = zeppelin_secret_key_write_ntt(sk, buf, sizeof buf, &written);
  CHECK("KAT sk_ntt.bin", same(st, written, f->sk_ntt, f->sk_ntt_len));

  counting_seed(seed_a, 0x20);
  counting_seed(seed_e, 0x40);
  start(m);
  st = zeppelin_keygen_public(sk, pk, ws, seed_a, seed_e);
  stop(m, "keygen (public key)");
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_public_key_write(pk, buf, sizeof buf, &written);
  CHECK("KAT pk.bin", same(st, written, f->pk, f->pk_len));

  for (uint32_t i = 0; i < info.n; i++) slots[i] = (uint32_t)((7919ull * i + 13) % info.t);
  start(m);
  st = zeppelin_encode(slots, info.n, pt);
  stop(m, "encode");
  counting_seed(seed_a, 0x60);
  counting_seed(seed_e, 0x80);
  start(m);
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_encrypt_seeded(sk, pt, info.k, seed_a, seed_e, sct, ws);
  stop(m, "seeded encrypt");
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_seeded_ciphertext_write(sct, buf, sizeof buf, &written);
  CHECK("KAT ct_seeded.bin", same(st, written, f->ct_seeded, f->ct_seeded_len));

  counting_seed(seed_a, 0xa0);
  counting_seed(seed_e, 0xc0);
  start(m);
  st = zeppelin_encrypt_symmetric(sk, pt, info.k, seed_a, seed_e, ct, ws);
  stop(m, "symmetric encrypt");
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_ciphertext_write(ct, buf, sizeof buf, &written);
  CHECK("KAT ct_symmetric.bin", same(st, written, f->ct_symmetric, f->ct_symmetric_len));

  counting_seed(seed_e, 0xe0);
  start(m);
  st = zeppelin_encrypt_public(pk, pt, info.k, seed_e, ct, ws);
  stop(m, "public-key encrypt");
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_ciphertext_write(ct, buf, sizeof buf, &written);
  CHECK("KAT ct_public.bin", same(st, written, f->ct_public, f->ct_public_len));

  /* The pinned ciphertexts, read back from the files, decrypt to the KAT slots. */
  ok = zeppelin_seeded_ciphertext_read(sct, info.k, f->ct_seeded, f->ct_seeded_len) == ZEPPELIN_STATUS_OK;
  start(m);
  ok = ok && zeppelin_decrypt_seeded(sk, sct, pt, ws) == ZEPPELIN_STATUS_OK;
  stop(m, "decrypt (seeded)");
  start(m);
  ok = ok && zeppelin_decode(pt, out, info.n) == ZEPPELIN_STATUS_OK;
  stop(m, "decode");
  ok = ok && memcmp(out, slots, info.n * sizeof out[0]) == 0;
  const uint8_t *full[2] = {f->ct_symmetric, f->ct_public};
  size_t full_len[2] = {f->ct_symmetric_len, f->ct_public_len};
  for (int i = 0; i < 2; i++) {
    memset(out, 0, sizeof out);
    ok = ok && zeppelin_ciphertext_read(ct, info.k, full[i], full_len[i]) == ZEPPELIN_STATUS_OK;
    start(m);
    ok = ok && zeppelin_decrypt(sk, ct, pt, ws) == ZEPPELIN_STATUS_OK;
    stop(m, i == 0 ? "decrypt (symmetric)" : "decrypt (public)");
    ok = ok && zeppelin_decode(pt, out, info.n) == ZEPPELIN_STATUS_OK &&
         memcmp(out, slots, info.n * sizeof out[0]) == 0;
  }
  fails += !ok;
  report(name3(label, "KAT files decrypt to the KAT slots"), ok);

  ok = zeppelin_object_destroy(sk) == ZEPPELIN_STATUS_OK && zeppelin_object_destroy(pk) == ZEPPELIN_STATUS_OK &&
       zeppelin_object_destroy(ct) == ZEPPELIN_STATUS_OK && zeppelin_object_destroy(sct) == ZEPPELIN_STATUS_OK &&
       zeppelin_object_destroy(pt) == ZEPPELIN_STATUS_OK && zeppelin_object_destroy(ws) == ZEPPELIN_STATUS_OK;
  CHECK("objects destroyed", ok);
  memset(buf, 0, sizeof buf);
  return fails;
#undef CHECK
}

/* ----- RBLWE: rblwe::kat::generate, section by section ----------------------------------- */

static const uint8_t KAT_SEED[32] = "zeppelin-rblwe known-answer a!!!";
static uint64_t kat_mem[(ZEPPELIN_KAT_ENTROPY_SIZE + 7) / 8];
static uint64_t rng_mem[(ZEPPELIN_RNG_SIZE + 7) / 8];
static uint64_t masked_mem[(ZEPPELIN_RBLWE_MASKED_KEY_SIZE + 7) / 8];
static uint64_t masked2_mem[(ZEPPELIN_RBLWE_MASKED_KEY_SIZE + 7) / 8];
static uint64_t cca_masked_mem[(ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE + 7) / 8];

typedef struct {
  const uint8_t *file;
  size_t len, pos;
  int mismatch;
  const char *first_bad;
} kat_cursor;

static void section(kat_cursor *c, const char *name, ZeppelinStatus st, const uint8_t *bytes, size_t len) {
  if (st != ZEPPELIN_STATUS_OK || c->pos + len > c->len || memcmp(c->file + c->pos, bytes, len) != 0) {
    if (!c->mismatch) c->first_bad = name;
    c->mismatch = 1;
  }
  c->pos += len;
}

int run_rblwe_kat(uint32_t set, const char *label, const uint8_t *file, size_t len,
                  kat_report_fn report, const kat_meter *m) {
  ZeppelinRblweSizes z;
  ZeppelinKatEntropy *kat;
  ZeppelinRng *rng;
  ZeppelinRblweMaskedKey *masked = NULL, *masked2 = NULL;
  ZeppelinRblweCcaMaskedKey *cca_masked = NULL;
  static uint8_t a[512], pk[1024], sk[64], msg[64], ct[1024], dec[64];
  static uint8_t cca_sk[ZEPPELIN_RBLWE_MAX_CCA_SECRET_KEY_BYTES], cca_pk[1024];
  static uint8_t cca_ct[ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES], mpk[1024];
  kat_cursor c = {file, len, 0, 0, "none"};
  ZeppelinStatus st;
  const char *names[] = {"", "set1", "set2", "set3"};

  if (zeppelin_rblwe_sizes(set, &z) != ZEPPELIN_STATUS_OK ||
      zeppelin_kat_entropy_init(kat_mem, sizeof kat_mem, (const uint8_t *)names[set], strlen(names[set]), &kat) != ZEPPELIN_STATUS_OK ||
      zeppelin_rng_init(rng_mem, sizeof rng_mem, zeppelin_kat_entropy_fill, kat, &rng) != ZEPPELIN_STATUS_OK) {
    report(name3(label, "setup"), 0);
    return 1;
  }
  st = zeppelin_rblwe_public_parameter(set, KAT_SEED, a, sizeof a);
  section(&c, "a", st, a, z.public_parameter);
  start(m);
  st = zeppelin_rblwe_cpa_keygen(set, KAT_SEED, rng, pk, sizeof pk, sk, sizeof sk);
  stop(m, "cpa keygen");
  section(&c, "cpa.pk", st, pk, z.public_key);
  section(&c, "cpa.sk", st, sk, z.secret_key);
  st = zeppelin_rng_fill(rng, msg, z.message);
  section(&c, "message", st, msg, z.message);
  start(m);
  st = zeppelin_rblwe_cpa_encrypt(set, pk, z.public_key, msg, z.message, rng, ct, sizeof ct);
  stop(m, "cpa encrypt");
  section(&c, "cpa.ct", st, ct, z.ciphertext);
  start(m);
  st = zeppelin_rblwe_cpa_decrypt(set, sk, z.secret_key, ct, z.ciphertext, dec, sizeof dec);
  stop(m, "cpa decrypt");
  section(&c, "cpa.dec", st, dec, z.message);
  st = zeppelin_rblwe_masked_key_init(set, masked_mem, sizeof masked_mem, sk, z.secret_key, rng, &masked);
  start(m);
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_rblwe_masked_decrypt(masked, ct, z.ciphertext, rng, dec, sizeof dec);
  stop(m, "masked cpa decrypt");
  section(&c, "masked.dec", st, dec, z.message);

  start(m);
  st = zeppelin_rblwe_cca_keygen(set, KAT_SEED, rng, cca_pk, sizeof cca_pk, cca_sk, sizeof cca_sk);
  stop(m, "cca keygen");
  section(&c, "cca.sk", st, cca_sk, z.cca_secret_key);
  start(m);
  st = zeppelin_rblwe_cca_encrypt(set, cca_pk, z.public_key, msg, z.message, rng, cca_ct, sizeof cca_ct);
  stop(m, "cca encrypt");
  section(&c, "cca.ct", st, cca_ct, z.cca_ciphertext);
  start(m);
  st = zeppelin_rblwe_cca_decrypt(set, cca_sk, z.cca_secret_key, cca_ct, z.cca_ciphertext, rng, dec, sizeof dec);
  stop(m, "cca decrypt");
  section(&c, "cca.dec", st, dec, z.message);
  st = zeppelin_rblwe_cca_masked_key_init(set, cca_masked_mem, sizeof cca_masked_mem, cca_sk, z.cca_secret_key, rng, &cca_masked);
  start(m);
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_rblwe_cca_masked_decrypt(cca_masked, cca_ct, z.cca_ciphertext, rng, dec, sizeof dec);
  stop(m, "masked cca decrypt");
  section(&c, "cca.dec-masked", st, dec, z.message);

  cca_ct[z.cca_ciphertext - 1 - (z.n / 8 - 1)] ^= 1; /* bit 0 of c4 */
  st = zeppelin_rblwe_cca_decrypt(set, cca_sk, z.cca_secret_key, cca_ct, z.cca_ciphertext, rng, dec, sizeof dec);
  section(&c, "cca.reject", st, dec, z.message);
  st = zeppelin_rblwe_cca_masked_decrypt(cca_masked, cca_ct, z.cca_ciphertext, rng, dec, sizeof dec);
  section(&c, "cca.reject-masked", st, dec, z.message);

  start(m);
  st = zeppelin_rblwe_masked_keygen(set, KAT_SEED, rng, mpk, sizeof mpk, masked2_mem, sizeof masked2_mem, &masked2);
  stop(m, "masked keygen");
  section(&c, "masked-keygen.pk", st, mpk, z.public_key);
  st = zeppelin_rblwe_cpa_encrypt(set, mpk, z.public_key, msg, z.message, rng, ct, sizeof ct);
  if (st == ZEPPELIN_STATUS_OK) st = zeppelin_rblwe_masked_decrypt(masked2, ct, z.ciphertext, rng, dec, sizeof dec);
  section(&c, "masked-keygen.dec", st, dec, z.message);

  int ok = !c.mismatch && c.pos == c.len;
  report(name3(label, ok ? "KAT (15 sections, byte for byte)" : c.first_bad), ok);
  zeppelin_object_destroy(masked);
  zeppelin_object_destroy(masked2);
  zeppelin_object_destroy(cca_masked);
  zeppelin_object_destroy(rng);
  zeppelin_object_destroy(kat);
  memset(sk, 0, sizeof sk);
  memset(cca_sk, 0, sizeof cca_sk);
  return !ok;
}

size_t kat_first_diff(void) { return first_diff; }
