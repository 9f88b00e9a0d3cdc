/* Vector table and reset handler of the C example firmware (both boards): copies .data,
 * clears .bss, enables the FPU (and on the M55 the MVE, same CPACR bits), runs main and exits
 * through semihosting with its status. */
#include <stdint.h>

#include "board.h"

extern uint32_t __stack_top[], __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
int main(void);

__attribute__((noreturn)) void reset_handler(void) {
  /* CP10/CP11 full access: FPU (and Helium on the M55) before any FP/MVE instruction */
  *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
  __asm__ volatile("dsb\n isb" ::: "memory");
  for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
  for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
  board_exit(main());
}

__attribute__((noreturn)) static void fault_handler(void) {
  out("FAIL fault exception (HardFault/MemManage/BusFault/UsageFault): a trap or a panic");
  out_line();
  board_exit(99);
}

__attribute__((section(".vectors"), used)) static const void *const vectors[16] = {
    __stack_top, (const void *)reset_handler, (const void *)fault_handler, (const void *)fault_handler,
    (const void *)fault_handler, (const void *)fault_handler, (const void *)fault_handler, 0, 0, 0, 0,
    (const void *)fault_handler, 0, 0, (const void *)fault_handler, (const void *)fault_handler,
};
