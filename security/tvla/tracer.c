/* Leakage-trace recorder for Unicorn (Cortex-M33), used by security/tvla/tvla.py.
 *
 * Python hooks run ~150k instructions/s with full tracing; these native hooks record the
 * same samples at Unicorn's hooked speed. Python decodes every executed instruction once
 * with Capstone and hands over a table: for each halfword address of the code region, a
 * bit mask of the registers the instruction writes (bit 0..12 = r0..r12, bit 13 = lr,
 * bit 14 = the APSR flags NZCVQ and GE). Recording runs from `start` (the trigger-on
 * function) to the first `stop` address and then stays off until `tvla_reset`.
 *
 * Samples, in execution order:
 *   register writes: HW(value) and HD(previous value of that register, value); the value is
 *     read at the next instruction's hook (Unicorn reports registers before an instruction).
 *   stores: HW(data) and HD(previous store data, data) - the memory write bus.
 * Plus an FNV-1a hash of the executed PCs and the instruction count, so the caller can
 * require identical control flow in every trace (samples are aligned by position).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unicorn/unicorn.h>

#define NREGS 15
#define FLAGS 14
#define UNKNOWN 0x80000000u
#define MAX_STOPS 8

static uc_engine *uc;
static uc_hook code_hook, write_hook;
static uint32_t lo, hi;
static const uint32_t *masks;
static uint32_t start_pc, stops[MAX_STOPS];
static int nstops;
static const int regids[NREGS] = {
    UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2,  UC_ARM_REG_R3,  UC_ARM_REG_R4,
    UC_ARM_REG_R5, UC_ARM_REG_R6, UC_ARM_REG_R7,  UC_ARM_REG_R8,  UC_ARM_REG_R9,
    UC_ARM_REG_R10, UC_ARM_REG_R11, UC_ARM_REG_R12, UC_ARM_REG_LR, UC_ARM_REG_XPSR};

static int recording, done, started;
static uint32_t pending, pending_pc;
static uint32_t last[NREGS], last_store;

/* outputs */
static size_t cap;
static uint8_t *reg_hw, *reg_hd, *reg_id, *st_hw, *st_hd;
static uint32_t *reg_pc, *st_pc;
static size_t nreg, nst;
static uint64_t pc_hash, ninsn, unknown, overflow;
static uint32_t first_unknown;

static uint32_t read_reg(int i) {
    uint32_t v = 0;
    uc_reg_read(uc, regids[i], &v);
    if (i == FLAGS) v &= 0xf80f0000u; /* NZCVQ and GE[3:0] */
    return v;
}

static void flush(void) {
    uint32_t m = pending;
    pending = 0;
    while (m) {
        int i = __builtin_ctz(m);
        m &= m - 1;
        uint32_t v = read_reg(i);
        if (nreg < cap) {
            reg_hw[nreg] = (uint8_t)__builtin_popcount(v);
            reg_hd[nreg] = (uint8_t)__builtin_popcount(v ^ last[i]);
            reg_id[nreg] = (uint8_t)i;
            reg_pc[nreg] = pending_pc;
            nreg++;
        } else {
            overflow++;
        }
        last[i] = v;
    }
}

static int is_stop(uint32_t pc) {
    for (int i = 0; i < nstops; i++)
        if (stops[i] == pc) return 1;
    return 0;
}

static void on_code(uc_engine *u, uint64_t address, uint32_t size, void *user) {
    (void)u; (void)size; (void)user;
    uint32_t pc = (uint32_t)address;
    if (pending) flush();
    if (!recording) {
        if (done || pc != start_pc) return;
        recording = 1;
        started = 1;
        for (int i = 0; i < NREGS; i++) last[i] = read_reg(i);
    } else if (is_stop(pc)) {
        recording = 0;
        done = 1;
        return;
    }
    pc_hash = (pc_hash ^ pc) * 0x100000001b3ull;
    ninsn++;
    if (pc < lo || pc >= hi) {
        if (!unknown) first_unknown = pc;
        unknown++;
        return;
    }
    uint32_t m = masks[(pc - lo) >> 1];
    if (m & UNKNOWN) {
        if (!unknown) first_unknown = pc;
        unknown++;
        return;
    }
    pending = m;
    pending_pc = pc;
}

static void on_write(uc_engine *u, uc_mem_type type, uint64_t address, int size, int64_t value,
                     void *user) {
    (void)u; (void)type; (void)address; (void)user;
    if (!recording) return;
    uint32_t v = (uint32_t)value;
    if (size == 1) v &= 0xffu;
    else if (size == 2) v &= 0xffffu;
    if (nst < cap) {
        st_hw[nst] = (uint8_t)__builtin_popcount(v);
        st_hd[nst] = (uint8_t)__builtin_popcount(v ^ last_store);
        st_pc[nst] = pending_pc;
        nst++;
    } else {
        overflow++;
    }
    last_store = v;
}

/* Attaches to a Unicorn engine; `table` has (code_hi - code_lo) / 2 entries and must stay
 * alive. Returns 0 on success. */
int tvla_attach(uc_engine *engine, uint32_t code_lo, uint32_t code_hi, const uint32_t *table,
                size_t capacity) {
    uc = engine;
    lo = code_lo;
    hi = code_hi;
    masks = table;
    cap = capacity;
    reg_hw = malloc(cap); reg_hd = malloc(cap); reg_id = malloc(cap);
    st_hw = malloc(cap); st_hd = malloc(cap);
    reg_pc = malloc(cap * 4); st_pc = malloc(cap * 4);
    if (!reg_hw || !reg_hd || !reg_id || !st_hw || !st_hd || !reg_pc || !st_pc) return -1;
    if (uc_hook_add(uc, &code_hook, UC_HOOK_CODE, (void *)on_code, NULL, 1, 0) != UC_ERR_OK)
        return -2;
    if (uc_hook_add(uc, &write_hook, UC_HOOK_MEM_WRITE, (void *)on_write, NULL, 1, 0) !=
        UC_ERR_OK)
        return -3;
    return 0;
}

int tvla_set_window(uint32_t start, const uint32_t *stop_list, int n) {
    if (n > MAX_STOPS) return -1;
    start_pc = start;
    nstops = n;
    memcpy(stops, stop_list, (size_t)n * 4);
    return 0;
}

void tvla_reset(void) {
    recording = done = started = 0;
    pending = 0;
    nreg = nst = 0;
    pc_hash = 0xcbf29ce484222325ull;
    ninsn = unknown = overflow = 0;
    first_unknown = 0;
    last_store = 0;
}

/* After emu_start returns: records the last instruction's register writes. */
void tvla_finish(void) {
    if (pending) flush();
    recording = 0;
}

/* Results of the last trace. */
size_t tvla_nreg(void) { return nreg; }
size_t tvla_nstore(void) { return nst; }
uint64_t tvla_hash(void) { return pc_hash; }
uint64_t tvla_ninsn(void) { return ninsn; }
uint64_t tvla_unknown(void) { return unknown; }
uint32_t tvla_first_unknown(void) { return first_unknown; }
uint64_t tvla_overflow(void) { return overflow; }
int tvla_started(void) { return started; }
const uint8_t *tvla_reg_hw(void) { return reg_hw; }
const uint8_t *tvla_reg_hd(void) { return reg_hd; }
const uint8_t *tvla_reg_id(void) { return reg_id; }
const uint32_t *tvla_reg_pc(void) { return reg_pc; }
const uint8_t *tvla_st_hw(void) { return st_hw; }
const uint8_t *tvla_st_hd(void) { return st_hd; }
const uint32_t *tvla_st_pc(void) { return st_pc; }
