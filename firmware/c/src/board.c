/* See board.h. */
#include "board.h"

#include <stddef.h>

/* ----- semihosting ------------------------------------------------------------------------ */
static int32_t semihost(int32_t op, const void *arg) {
  register int32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static char line[256];
static size_t line_len;

void out(const char *s) {
  while (*s && line_len < sizeof line - 2) line[line_len++] = *s++;
}

void out_u32(uint32_t v) {
  char digits[16];
  int n = 0;
  do {
    if (n == 3 || n == 7 || n == 11) digits[n++] = ',';
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  char s[17];
  for (int i = 0; i < n; i++) s[i] = digits[n - 1 - i];
  s[n] = 0;
  out(s);
}

void out_line(void) {
  line[line_len++] = '\n';
  line[line_len] = 0;
  semihost(0x04, line); /* SYS_WRITE0 */
  line_len = 0;
}

void board_exit(int code) {
  static uint32_t block[2];
  block[0] = 0x20026; /* ADP_Stopped_ApplicationExit */
  block[1] = (uint32_t)code;
  semihost(0x20, block); /* SYS_EXIT_EXTENDED */
  for (;;) __asm__ volatile("wfi");
}

/* ----- SysTick instruction meter ---------------------------------------------------------- */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

static uint32_t ticks_per_million; /* SysTick ticks per 10^6 instructions */
static uint32_t start_value;

static void systick_start(void) {
  SYST_CSR = 0;
  SYST_RVR = 0xFFFFFF;
  SYST_CVR = 0;
  SYST_CSR = 0x5; /* processor clock, enabled, no interrupt */
  start_value = SYST_CVR;
}

static uint32_t systick_elapsed(void) {
  uint32_t now = SYST_CVR;
  return (start_value - now) & 0xFFFFFF; /* counts down; an operation stays below 2^24 ticks */
}

/* 2,000,000 instructions: 1,000,000 iterations of subs + bne. */
static void counted_loop(void) {
  uint32_t n = 1000000;
  __asm__ volatile("1: subs %0, %0, #1\n bne 1b" : "+r"(n) : : "cc");
}

void meter_calibrate(void) {
  systick_start();
  counted_loop();
  uint32_t t = systick_elapsed();
  ticks_per_million = t / 2;
}

uint32_t meter_ticks_per_million(void) { return ticks_per_million; }

/* ----- stack high-water mark -------------------------------------------------------------- */
extern uint32_t __stack_bottom[]; /* linker script: lowest stack word */
#define PAINT 0xC5C5C5C5u
static uintptr_t painted_top;

__attribute__((noinline)) void meter_begin(void) {
  uint32_t *sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  /* paint below this frame, from the stack bottom up to 64 bytes under the current SP */
  uint32_t *top = sp - 16;
  for (uint32_t *p = __stack_bottom; p < top; p++) *p = PAINT;
  painted_top = (uintptr_t)top;
  systick_start();
}

__attribute__((noinline)) void meter_end(uint32_t *instructions, uint32_t *stack_bytes) {
  uint32_t t = systick_elapsed();
  *instructions = ticks_per_million ? (uint32_t)((uint64_t)t * 1000000u / ticks_per_million) : 0;
  uint32_t *p = __stack_bottom;
  while ((uintptr_t)p < painted_top && *p == PAINT) p++;
  /* bytes below meter_begin's caller frame that the operation wrote */
  *stack_bytes = (uint32_t)(painted_top + 64 - (uintptr_t)p);
}
