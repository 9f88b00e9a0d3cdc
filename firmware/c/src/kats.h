/* Known-answer tests of the BFV client and of RBLWE, driven through the C ABI only
 * (zeppelin.h). Shared by the host sanitizer test (crates/ffi/tests/c) and the firmware. */
#ifndef ZEPPELIN_KATS_H
#define ZEPPELIN_KATS_H
#include <stddef.h>
#include <stdint.h>

/* The six files of one BFV preset (crates/zeppelin/tests/kats/<preset>/). */
typedef struct {
  const uint8_t *sk, *sk_ntt, *pk, *ct_seeded, *ct_symmetric, *ct_public;
  size_t sk_len, sk_ntt_len, pk_len, ct_seeded_len, ct_symmetric_len, ct_public_len;
} bfv_kat_files;

/* Reports one check (ok = 1 pass). */
typedef void (*kat_report_fn)(const char *what, int ok);
/* Optional measurement around each operation: start(), then stop(name). */
typedef struct {
  void (*start)(void);
  void (*stop)(const char *operation);
} kat_meter;

/* Runs the BFV KATs of `preset` (ZEPPELIN_PRESET_*) byte for byte; returns failures. */
int run_bfv_kats(uint32_t preset, const char *label, const bfv_kat_files *files,
                 kat_report_fn report, const kat_meter *meter);
/* Replays the RBLWE KAT script of `set` against the pinned .kat file; returns failures. */
/* Index of the first differing byte of the last failed file comparison. */
size_t kat_first_diff(void);
int run_rblwe_kat(uint32_t set, const char *label, const uint8_t *file, size_t len,
                  kat_report_fn report, const kat_meter *meter);

#endif
