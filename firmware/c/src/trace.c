/* Trace image of the C library (security/trace/run.sh, issue 31): the secret paths of the
 * C ABI (zeppelin.h) called from C, one trace window per call, on pairs of inputs that
 * differ only in secret data or ciphertext validity. Same protocol as the Rust trace images
 * (firmware/harness/src/trace.rs): the script loads a header and the pairs at
 * CTRACE_INPUT_ADDR (RAM outside the image) with QEMU's -device loader; the QEMU plugin
 * security/trace/ctrace.c hashes every instruction address and every memory-access address
 * between ctrace_open and ctrace_close. Keys, ciphertexts and plaintexts are made outside
 * the windows; the objects and buffers live at one address for both windows of a pair.
 *
 * Operations (header word 1):
 *   16*set + 1   RBLWE CCA2 decryption, key as bytes (zeppelin_rblwe_cca_decrypt)
 *   16*set + 2   RBLWE CCA2 decryption, key object (zeppelin_rblwe_cca_key_decrypt)
 *   16*set + 3   RBLWE CCA2 decryption, masked key (zeppelin_rblwe_cca_masked_decrypt)
 *     (set 1..3). Even pairs: one key, the valid ciphertext against the same with one bit
 *     flipped (the validity bit is the only secret difference); odd pairs: the two sides'
 *     keys, one ciphertext to side 0's key (valid against another key's ciphertext).
 *   100  BFV symmetric encryption (zeppelin_encrypt_symmetric): secret key, plaintext and
 *        error seed differ; seed_a public
 *   101  BFV public-key encryption (zeppelin_encrypt_public): plaintext and error seed
 *        differ; the public key is the pair's
 *   102  BFV decryption (zeppelin_decrypt): the secret key differs; the ciphertext (to
 *        side 0's key) is the pair's
 *   200, 201  leaky controls: a branch on a secret bit, a load at a secret index
 * Prints "TRACE op <op> pairs <n> differing-outputs <d> failures <f>" and exits with the
 * number of failed calls (0 = every call returned ZEPPELIN_STATUS_OK). Not a KAT image: it
 * is built by `make trace` only. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "zeppelin.h"

/* RAM that no segment of the image covers (as the Rust trace images: SSRAM1 at 3 MiB on
 * the AN505, SRAM above the linked 2 MiB on the AN547). */
#if defined(TRACE_BOARD_M33)
#define INPUT_ADDR 0x10300000u
#else
#define INPUT_ADDR 0x21300000u
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
__asm__(".globl CTRACE_INPUT_ADDR\n.set CTRACE_INPUT_ADDR, " STR(INPUT_ADDR));

#define MAGIC 0x52545443u
#define PUBLIC_BYTES 32
#define SECRET_BYTES 96
#define PAIR_BYTES (PUBLIC_BYTES + 2 * SECRET_BYTES)
#define MAX_PAIRS 128
#define HEADER_BYTES 16

/* The window markers: the plugin starts hashing at ctrace_open's first instruction and
 * stops before ctrace_close's (distinct bodies keep them at distinct addresses). */
__attribute__((noinline, used)) void ctrace_open(void) { __asm__ volatile("nop"); }
__attribute__((noinline, used)) void ctrace_close(void) { __asm__ volatile("nop\n nop"); }

static uint8_t input_byte(size_t i) { return ((const volatile uint8_t *)INPUT_ADDR)[i]; }
static uint32_t input_word(size_t i) {
  return (uint32_t)input_byte(i) | (uint32_t)input_byte(i + 1) << 8 |
         (uint32_t)input_byte(i + 2) << 16 | (uint32_t)input_byte(i + 3) << 24;
}

typedef struct {
  uint8_t public_block[PUBLIC_BYTES];
  uint8_t secret[2][SECRET_BYTES];
} pair_t;

static void read_pair(uint32_t k, pair_t *p) {
  size_t base = HEADER_BYTES + (size_t)k * PAIR_BYTES;
  for (size_t i = 0; i < PUBLIC_BYTES; i++) p->public_block[i] = input_byte(base + i);
  for (size_t s = 0; s < 2; s++)
    for (size_t i = 0; i < SECRET_BYTES; i++)
      p->secret[s][i] = input_byte(base + PUBLIC_BYTES + s * SECRET_BYTES + i);
}

/* Secret seed j (0 key, 1 noise, 2 message) of a side. */
static const uint8_t *seed_of(const pair_t *p, int side, int j) { return p->secret[side] + 32 * j; }

/* Test data from a seed (xorshift32 as zeppelin_harness::trace::Expand): setup only. */
static uint32_t expand_state;
static void expand_init(const uint8_t *seed) {
  uint32_t h = 0x9e3779b9u;
  for (int i = 0; i < 32; i += 4)
    h = (h ^ ((uint32_t)seed[i] | (uint32_t)seed[i + 1] << 8 | (uint32_t)seed[i + 2] << 16 |
              (uint32_t)seed[i + 3] << 24)) * 0x01000193u;
  expand_state = h | 1;
}
static uint32_t expand_next(void) {
  uint32_t x = expand_state;
  x ^= x << 13; x ^= x >> 17; x ^= x << 5;
  expand_state = x;
  return x;
}

/* FNV-1a of an output: pairs whose two outputs differ show that the secrets reached it. */
static uint32_t digest(const void *data, size_t len) {
  const uint8_t *b = data;
  uint32_t h = 0x811c9dc5u;
  for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x01000193u;
  return h;
}

/* The TRNG stand-in of the windows (as main.c's sim_trng), seeded per side before the
 * window: its state is the side's secret noise seed. NOT entropy. */
static uint32_t trng_state;
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

static uint64_t rng_mem[(ZEPPELIN_RNG_SIZE + 7) / 8];
static ZeppelinRng *rng_from(const uint8_t *seed) {
  ZeppelinRng *rng = NULL;
  expand_init(seed);
  trng_state = expand_next();
  if (zeppelin_rng_init(rng_mem, sizeof rng_mem, sim_trng, NULL, &rng) != ZEPPELIN_STATUS_OK ||
      zeppelin_rng_prefetch(rng) != ZEPPELIN_STATUS_OK)
    return NULL;
  return rng;
}

/* ---- RBLWE CCA2 ------------------------------------------------------------------------- */
static uint8_t rb_pk[ZEPPELIN_RBLWE_MAX_PUBLIC_KEY_BYTES];
static uint8_t rb_sk[ZEPPELIN_RBLWE_MAX_CCA_SECRET_KEY_BYTES];
static uint8_t rb_ct[ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES];    /* what the window reads */
static uint8_t rb_valid[ZEPPELIN_RBLWE_MAX_CCA_CIPHERTEXT_BYTES];
static uint8_t rb_msg[ZEPPELIN_RBLWE_MAX_MESSAGE_BYTES], rb_out[ZEPPELIN_RBLWE_MAX_MESSAGE_BYTES];
static uint64_t ck_mem[(ZEPPELIN_RBLWE_CCA_KEY_SIZE + 7) / 8];
static uint64_t cmk_mem[(ZEPPELIN_RBLWE_CCA_MASKED_KEY_SIZE + 7) / 8];

/* The CCA2 secret key of `seed` (a = PublicParameter(public block)) into rb_sk/rb_pk. */
static int rblwe_key(uint32_t set, const pair_t *p, const uint8_t *seed, const ZeppelinRblweSizes *z) {
  ZeppelinRng *rng = rng_from(seed);
  return rng && zeppelin_rblwe_cca_keygen(set, p->public_block, rng, rb_pk, z->public_key, rb_sk,
                                          z->cca_secret_key) == ZEPPELIN_STATUS_OK;
}

/* One window: side's key (in rb_sk) made into the op's key form before it, the decryption
 * of rb_ct alone inside. Returns the digest of the output, or 0 with *failed set. */
static uint32_t rblwe_side(uint32_t set, uint32_t kind, const uint8_t *noise,
                           const ZeppelinRblweSizes *z, int *failed) {
  ZeppelinRblweCcaKey *ck = NULL;
  ZeppelinRblweCcaMaskedKey *cmk = NULL;
  ZeppelinStatus st = ZEPPELIN_STATUS_OK;
  ZeppelinRng *rng = rng_from(noise);
  if (!rng) { *failed = 1; return 0; }
  if (kind == 2) st = zeppelin_rblwe_cca_key_init(set, ck_mem, sizeof ck_mem, rb_sk, z->cca_secret_key, &ck);
  if (kind == 3)
    st = zeppelin_rblwe_cca_masked_key_init(set, cmk_mem, sizeof cmk_mem, rb_sk, z->cca_secret_key, rng, &cmk);
  if (st != ZEPPELIN_STATUS_OK || zeppelin_rng_prefetch(rng) != ZEPPELIN_STATUS_OK) { *failed = 1; return 0; }
  memset(rb_out, 0, sizeof rb_out);
  ctrace_open();
  if (kind == 1)
    st = zeppelin_rblwe_cca_decrypt(set, rb_sk, z->cca_secret_key, rb_ct, z->cca_ciphertext, rng, rb_out, z->message);
  else if (kind == 2)
    st = zeppelin_rblwe_cca_key_decrypt(ck, rb_ct, z->cca_ciphertext, rng, rb_out, z->message);
  else
    st = zeppelin_rblwe_cca_masked_decrypt(cmk, rb_ct, z->cca_ciphertext, rng, rb_out, z->message);
  ctrace_close();
  if (ck) zeppelin_object_destroy(ck);
  if (cmk) zeppelin_object_destroy(cmk);
  if (st != ZEPPELIN_STATUS_OK) *failed = 1;
  return digest(rb_out, z->message);
}

static int rblwe_pair(uint32_t set, uint32_t kind, uint32_t k, const pair_t *p, uint32_t d[2]) {
  ZeppelinRblweSizes z;
  int failed = 0;
  int tamper = k % 2 == 0;
  if (zeppelin_rblwe_sizes(set, &z) != ZEPPELIN_STATUS_OK || !rblwe_key(set, p, seed_of(p, 0, 0), &z))
    return 0;
  expand_init(p->public_block);
  for (size_t i = 0; i < z.message; i++) rb_msg[i] = (uint8_t)expand_next();
  ZeppelinRng *rng = rng_from(p->public_block);
  if (!rng || zeppelin_rblwe_cca_encrypt(set, rb_pk, z.public_key, rb_msg, z.message, rng, rb_valid,
                                         z.cca_ciphertext) != ZEPPELIN_STATUS_OK)
    return 0;
  for (int side = 0; side < 2; side++) {
    memcpy(rb_ct, rb_valid, z.cca_ciphertext);
    if (tamper && side == 1) {
      /* One bit of part (k/2) % 4 (c1, c2, c3, c4), position from side 1's message seed;
       * below bit 7 in the coefficient parts, so that it still parses under q = 128. */
      size_t n = z.n, part = (k / 2) % 4;
      size_t start = part == 0 ? 0 : part == 1 ? n : part == 2 ? 2 * n : 2 * n + n / 8;
      size_t len = part < 2 ? n : n / 8;
      expand_init(seed_of(p, 1, 2));
      size_t at = start + expand_next() % len;
      rb_ct[at] ^= (uint8_t)(1u << (expand_next() % (part < 2 ? 7 : 8)));
    }
    const uint8_t *key_seed = tamper ? seed_of(p, 0, 0) : seed_of(p, side, 0);
    if (!rblwe_key(set, p, key_seed, &z)) return 0;
    d[side] = rblwe_side(set, kind, seed_of(p, tamper ? 0 : side, 1), &z, &failed);
    memset(rb_sk, 0, sizeof rb_sk);
  }
  return !failed;
}

/* ---- BFV (preset Seal4096) -------------------------------------------------------------- */
static uint64_t sk_mem[(ZEPPELIN_SEAL4096_SECRET_KEY_SIZE + 7) / 8];
static uint64_t pk_mem[(ZEPPELIN_SEAL4096_PUBLIC_KEY_SIZE + 7) / 8];
static uint64_t ct_mem[(ZEPPELIN_SEAL4096_CIPHERTEXT_SIZE + 7) / 8];
static uint64_t pt_mem[(ZEPPELIN_PLAINTEXT_SIZE + 7) / 8];
static uint64_t ws_mem[(ZEPPELIN_WORKSPACE_SIZE + 7) / 8];
static uint32_t slots[ZEPPELIN_SLOTS];
static ZeppelinSecretKey *bsk;
static ZeppelinPublicKey *bpk;
static ZeppelinCiphertext *bct;
static ZeppelinPlaintext *bpt;
static ZeppelinWorkspace *bws;
static ZeppelinPresetInfo info;

static int bfv_objects(void) {
  return zeppelin_preset_info(ZEPPELIN_PRESET_SEAL4096, &info) == ZEPPELIN_STATUS_OK &&
         zeppelin_secret_key_init(ZEPPELIN_PRESET_SEAL4096, sk_mem, sizeof sk_mem, &bsk) == ZEPPELIN_STATUS_OK &&
         zeppelin_public_key_init(ZEPPELIN_PRESET_SEAL4096, pk_mem, sizeof pk_mem, &bpk) == ZEPPELIN_STATUS_OK &&
         zeppelin_ciphertext_init(ZEPPELIN_PRESET_SEAL4096, ct_mem, sizeof ct_mem, &bct) == ZEPPELIN_STATUS_OK &&
         zeppelin_plaintext_init(ZEPPELIN_PRESET_SEAL4096, pt_mem, sizeof pt_mem, &bpt) == ZEPPELIN_STATUS_OK &&
         zeppelin_workspace_init(ZEPPELIN_PRESET_SEAL4096, ws_mem, sizeof ws_mem, &bws) == ZEPPELIN_STATUS_OK;
}

/* The plaintext of a (message) seed: slots below t. */
static int bfv_plaintext(const uint8_t *seed) {
  expand_init(seed);
  for (uint32_t i = 0; i < info.n; i++) slots[i] = expand_next() % info.t;
  return zeppelin_encode(slots, info.n, bpt) == ZEPPELIN_STATUS_OK;
}

/* The ciphertext object's storage (its header and residues), the output of an encryption. */
static uint32_t ciphertext_digest(void) { return digest(ct_mem, sizeof ct_mem); }

static int bfv_pair(uint32_t op, const pair_t *p, uint32_t d[2]) {
  int failed = 0;
  ZeppelinStatus st;
  uint8_t seed_b[32];
  if (op == 101 || op == 102) {
    /* The pair's public key (op 101: of a key from the public block; op 102: of side 0's
     * key, which then encrypts the pair's ciphertext). */
    const uint8_t *key = op == 101 ? p->public_block : seed_of(p, 0, 0);
    for (int i = 0; i < 32; i++) seed_b[i] = p->public_block[i] ^ 0x5a;
    if (zeppelin_keygen_secret(bsk, key) != ZEPPELIN_STATUS_OK ||
        zeppelin_keygen_public(bsk, bpk, bws, p->public_block, seed_b) != ZEPPELIN_STATUS_OK)
      return 0;
  }
  if (op == 102) {
    if (!bfv_plaintext(p->public_block) ||
        zeppelin_encrypt_public(bpk, bpt, info.k, seed_b, bct, bws) != ZEPPELIN_STATUS_OK)
      return 0;
  }
  static uint8_t seed_e[32]; /* the side's error seed, at one address for both windows */
  for (int side = 0; side < 2; side++) {
    memcpy(seed_e, seed_of(p, side, 1), 32);
    if (op == 100) {
      if (zeppelin_keygen_secret(bsk, seed_of(p, side, 0)) != ZEPPELIN_STATUS_OK || !bfv_plaintext(seed_of(p, side, 2)))
        return 0;
      ctrace_open();
      st = zeppelin_encrypt_symmetric(bsk, bpt, info.k, p->public_block, seed_e, bct, bws);
      ctrace_close();
      d[side] = ciphertext_digest();
    } else if (op == 101) {
      if (!bfv_plaintext(seed_of(p, side, 2))) return 0;
      ctrace_open();
      st = zeppelin_encrypt_public(bpk, bpt, info.k, seed_e, bct, bws);
      ctrace_close();
      d[side] = ciphertext_digest();
    } else {
      if (zeppelin_keygen_secret(bsk, seed_of(p, side, 0)) != ZEPPELIN_STATUS_OK) return 0;
      ctrace_open();
      st = zeppelin_decrypt(bsk, bct, bpt, bws);
      ctrace_close();
      if (zeppelin_decode(bpt, slots, info.n) != ZEPPELIN_STATUS_OK) failed = 1;
      d[side] = digest(slots, sizeof slots);
    }
    if (st != ZEPPELIN_STATUS_OK) failed = 1;
  }
  return !failed;
}

/* ---- leaky controls (assembly, so that their shape survives the compiler) -------------- */
__attribute__((noinline)) static uint32_t leaky_branch(uint32_t secret) {
  uint32_t x = secret;
  __asm__ volatile("tst %0, #1\n beq 1f\n adds %0, %0, #3\n eors %0, %0, %0, lsl #1\n adds %0, %0, #5\n1:"
                   : "+l"(x) : : "cc");
  return x;
}
__attribute__((noinline)) static uint32_t leaky_load(const uint32_t *table, uint32_t secret) {
  uint32_t out;
  __asm__ volatile("and %1, %1, #63\n ldr %0, [%2, %1, lsl #2]" : "=&r"(out), "+r"(secret) : "r"(table) : "memory");
  return out;
}
static uint32_t table[64];
static int control_pair(uint32_t op, const pair_t *p, uint32_t d[2]) {
  expand_init(p->public_block);
  for (int i = 0; i < 64; i++) table[i] = expand_next();
  for (int side = 0; side < 2; side++) {
    uint32_t w;
    memcpy(&w, p->secret[side], 4);
    ctrace_open();
    uint32_t x = op == 200 ? leaky_branch(w) : leaky_load(table, w);
    ctrace_close();
    d[side] = digest(&x, 4);
  }
  return 1;
}

int main(void) {
  if (input_word(0) != MAGIC || input_word(8) > MAX_PAIRS) {
    out("FAIL trace: no input loaded at CTRACE_INPUT_ADDR (see security/trace/run.sh)");
    out_line();
    return 1;
  }
  uint32_t op = input_word(4), pairs = input_word(8), failures = 0, differing = 0;
  int objects = op >= 100 && op < 200 ? bfv_objects() : 1;
  static pair_t p;
  for (uint32_t k = 0; k < pairs; k++) {
    uint32_t d[2] = {0, 0};
    int ok = 0;
    read_pair(k, &p);
    if (!objects) ok = 0;
    else if (op >= 17 && op <= 51 && op % 16 >= 1 && op % 16 <= 3) ok = rblwe_pair(op / 16, op % 16, k, &p, d);
    else if (op >= 100 && op <= 102) ok = bfv_pair(op, &p, d);
    else if (op == 200 || op == 201) ok = control_pair(op, &p, d);
    if (ok) differing += d[0] != d[1];
    else failures++;
  }
  out("TRACE op ");
  out_u32(op);
  out(" pairs ");
  out_u32(pairs);
  out(" differing-outputs ");
  out_u32(differing);
  out(" failures ");
  out_u32(failures);
  out_line();
  return failures ? 1 : 0;
}
