/* Bare-metal services of the C example firmware under QEMU: semihosting output and exit,
 * the SysTick instruction meter (QEMU -icount shift=0: instructions retired, never cycles),
 * stack high-water marks by painting. */
#ifndef ZEPPELIN_BOARD_H
#define ZEPPELIN_BOARD_H
#include <stdint.h>

void out(const char *s);           /* appends to the current line */
void out_u32(uint32_t v);          /* decimal, with thousands separators */
void out_line(void);               /* prints the current line */
void board_exit(int code) __attribute__((noreturn));

void meter_calibrate(void);        /* instructions per SysTick tick, from a counted loop */
uint32_t meter_ticks_per_million(void);
void meter_begin(void);            /* paints the stack, starts SysTick */
void meter_end(uint32_t *instructions, uint32_t *stack_bytes);
#endif
