/* The floor of an AVX-512 NTT butterfly on this core: the arithmetic alone, in registers.
 *
 * Times 8 independent 16-lane Shoup butterflies per iteration, (x + t, x - t + 2q) with
 * t = y*w - hi(y*w')*q, with no loads, stores or stage permutations, so that the figure is
 * what the transform's arithmetic costs at best; and the same with IFMA on 52-bit lanes
 * (8 coefficients per vector). An n = 4096 transform has 12 * 2048 / 16 = 1,536 such
 * 16-lane butterflies. See README.md, known issues.
 *
 *   gcc -O2 -mavx512f -mavx512ifma bench/probes/butterfly_floor.c -o /tmp/butterfly_floor
 *   /tmp/butterfly_floor
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define ITERS 20000000L
#define CHAINS 8
#define TRANSFORM_BUTTERFLIES 1536.0 /* n = 4096: 16-lane butterflies per transform */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void report(const char *name, double seconds, uint64_t check) {
    double per16 = seconds / (ITERS * (double)CHAINS) * 1e9;
    printf("%-44s %.2f ns per 16 butterflies = %.2f us per n = 4096 transform (check %llu)\n",
           name, per16, per16 * TRANSFORM_BUTTERFLIES / 1000.0, (unsigned long long)check);
}

/* 32-bit lanes; odd lanes to the low halves by a shift (port 0) or a shuffle (port 5). */
static void shoup32(int shuffle) {
    const __m512i q = _mm512_set1_epi32(134176769), two_q = _mm512_set1_epi32(2 * 134176769);
    const __m512i w = _mm512_set1_epi32(12345678), w_shoup = _mm512_set1_epi32(395148923);
    const __m512i high = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
    __m512i x[CHAINS], y[CHAINS];
    for (int i = 0; i < CHAINS; i++) {
        x[i] = _mm512_set1_epi32(i * 1000 + 1);
        y[i] = _mm512_set1_epi32(i * 777 + 3);
    }
    double t0 = now();
    for (long k = 0; k < ITERS; k++) {
        for (int i = 0; i < CHAINS; i++) {
            __m512i odd = shuffle ? _mm512_shuffle_epi32(y[i], _MM_PERM_DDBB) : _mm512_srli_epi64(y[i], 32);
            __m512i quotient = _mm512_permutex2var_epi32(_mm512_mul_epu32(y[i], w_shoup), high,
                                                         _mm512_mul_epu32(odd, w_shoup));
            __m512i t = _mm512_sub_epi32(_mm512_mullo_epi32(y[i], w), _mm512_mullo_epi32(quotient, q));
            __m512i nx = _mm512_add_epi32(x[i], t);
            y[i] = _mm512_sub_epi32(_mm512_add_epi32(x[i], two_q), t);
            x[i] = nx;
        }
    }
    double s = now() - t0;
    uint64_t check = 0;
    for (int i = 0; i < CHAINS; i++)
        check += (uint32_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_xor_si512(x[i], y[i])));
    report(shuffle ? "Shoup, 32-bit lanes, odd lanes by vpshufd" : "Shoup, 32-bit lanes, odd lanes by vpsrlq",
           s, check);
}

/* IFMA: qhat = hi52(y*w'), t = lo52(y*w) + lo52(qhat*(2^52 - q)) mod 2^52; two vectors per
 * 16 coefficients. The masks keep the free-running values in 52 bits. */
static void ifma52(void) {
    const __m512i two_q = _mm512_set1_epi64(2 * 134176769ULL);
    const __m512i neg_q = _mm512_set1_epi64((1ULL << 52) - 134176769ULL);
    const __m512i mask = _mm512_set1_epi64((1ULL << 52) - 1), zero = _mm512_setzero_si512();
    const __m512i w = _mm512_set1_epi64(12345678), w_shoup = _mm512_set1_epi64(1234567890123ULL);
    __m512i x[CHAINS], y[CHAINS];
    for (int i = 0; i < CHAINS; i++) {
        x[i] = _mm512_set1_epi64(i * 1000 + 1);
        y[i] = _mm512_set1_epi64(i * 777 + 3);
    }
    double t0 = now();
    for (long k = 0; k < ITERS; k++) {
        for (int i = 0; i < CHAINS; i++) {
            __m512i quotient = _mm512_madd52hi_epu64(zero, y[i], w_shoup);
            __m512i t = _mm512_and_si512(
                _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, y[i], w), quotient, neg_q), mask);
            __m512i nx = _mm512_and_si512(_mm512_add_epi64(x[i], t), mask);
            y[i] = _mm512_and_si512(_mm512_sub_epi64(_mm512_add_epi64(x[i], two_q), t), mask);
            x[i] = nx;
        }
    }
    /* Two 8-lane vectors make 16 butterflies. */
    double s = 2 * (now() - t0);
    uint64_t check = 0;
    for (int i = 0; i < CHAINS; i++)
        check += (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(_mm512_xor_si512(x[i], y[i])));
    report("IFMA, 52-bit lanes (two vectors per 16)", s, check);
}

int main(void) {
    shoup32(0);
    shoup32(1);
    ifma52();
    return 0;
}
