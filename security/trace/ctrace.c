/*
 * ctrace: a QEMU TCG plugin for trace-equivalence checks (QEMU 7.2, plugin API version 1).
 *
 * Between an "open" and a "close" marker address (two tiny functions in the trace images),
 * it hashes two streams separately, one record per event, in execution order:
 *   - the PC stream: the address of every executed instruction (4 bytes, little-endian),
 *     condition-failed IT instructions included (QEMU calls the hook at instruction start);
 *   - the address stream: every guest memory access (4-byte virtual address, 1 byte
 *     size/store/sign), including the element accesses of Helium (MVE) loads, stores,
 *     gathers and scatters, which QEMU performs in helpers (mem callbacks fire there too).
 * At each close it appends one line to the out= file:
 *   window <k> insns <n> mems <m> pc <hash> mem <hash>   (see "the stream hash")
 * With dump=PREFIX it also writes the raw streams of the first dumpmax= windows (default 2)
 * to PREFIX<k>.pc / PREFIX<k>.mem: for locating the first divergence of a control, counting
 * the Helium instructions of a trace, and checking this file's hash in Python.
 *
 * Arguments: open=0xADDR,close=0xADDR,out=PATH[,dump=PREFIX[,dumpmax=N]]
 *
 * Debian's QEMU ships no plugin header, so the few API declarations used are written out
 * below from QEMU 7.2's documented plugin API (include/qemu/qemu-plugin.h, version 1); the
 * security script compiles this file at run time with the host's C compiler.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU 7.2 plugin API (version 1): the declarations this plugin uses ---------------- */
typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct qemu_info_t qemu_info_t; /* not read */
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
                                      void *userdata);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_sign_extended(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- the stream hash ------------------------------------------------------------------
 * Two 64-bit lanes, one record (a 64-bit word) per step. For a fixed record each step is a
 * bijection of the lane (xor or add, multiply by an odd constant, rotate), so a trace that
 * differs in exactly one record always gives a different hash; more differences collide
 * only by chance (~2^-64 per lane). Fast: SHA-256 here cost more than QEMU itself.
 * trace.py recomputes it independently on the dumped windows. */
typedef struct {
    uint64_t a, b, n;
} stream_hash;

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static void hash_init(stream_hash *h) {
    h->a = 0x243f6a8885a308d3ull;
    h->b = 0x13198a2e03707344ull;
    h->n = 0;
}

static inline void hash_step(stream_hash *h, uint64_t x) {
    h->a = rotl64((h->a ^ x) * 0x9e3779b97f4a7c15ull, 27);
    h->b = rotl64((h->b + x) * 0xc2b2ae3d27d4eb4full, 31);
    h->n++;
}

static void hash_hex(const stream_hash *h, char out[49]) {
    snprintf(out, 49, "%016llx%016llx%016llx", (unsigned long long)h->a,
             (unsigned long long)h->b, (unsigned long long)h->n);
}

/* ---- the trace windows ---------------------------------------------------------------- */
static uint64_t open_addr = UINT64_MAX, close_addr = UINT64_MAX;
static FILE *out;
static const char *dump_prefix;
static unsigned dump_max = 2;
static FILE *dump_pc, *dump_mem;
static bool active;
static unsigned window;
static uint64_t n_insns, n_mems;
static stream_hash pc_hash, mem_hash;

static void on_open(unsigned int vcpu, void *udata) {
    (void)vcpu; (void)udata;
    active = true;
    n_insns = n_mems = 0;
    hash_init(&pc_hash);
    hash_init(&mem_hash);
    if (dump_prefix && window < dump_max) {
        char path[4096];
        snprintf(path, sizeof path, "%s%u.pc", dump_prefix, window);
        dump_pc = fopen(path, "wb");
        snprintf(path, sizeof path, "%s%u.mem", dump_prefix, window);
        dump_mem = fopen(path, "wb");
    }
}

static void on_close(unsigned int vcpu, void *udata) {
    (void)vcpu; (void)udata;
    if (!active) return;
    char pc[49], mem[49];
    hash_hex(&pc_hash, pc);
    hash_hex(&mem_hash, mem);
    fprintf(out, "window %u insns %llu mems %llu pc %s mem %s\n", window,
            (unsigned long long)n_insns, (unsigned long long)n_mems, pc, mem);
    fflush(out);
    if (dump_pc) fclose(dump_pc);
    if (dump_mem) fclose(dump_mem);
    dump_pc = dump_mem = NULL;
    active = false;
    window++;
}

static void on_exec(unsigned int vcpu, void *udata) {
    (void)vcpu;
    if (!active) return;
    uint32_t pc = (uint32_t)(uintptr_t)udata;
    hash_step(&pc_hash, pc);
    if (dump_pc) {
        uint8_t rec[4] = {(uint8_t)pc, (uint8_t)(pc >> 8), (uint8_t)(pc >> 16), (uint8_t)(pc >> 24)};
        fwrite(rec, 1, 4, dump_pc);
    }
    n_insns++;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata) {
    (void)vcpu; (void)udata;
    if (!active) return;
    uint32_t a = (uint32_t)vaddr;
    uint8_t kind = (uint8_t)(qemu_plugin_mem_size_shift(info) |
                             (qemu_plugin_mem_is_store(info) ? 0x10 : 0) |
                             (qemu_plugin_mem_is_sign_extended(info) ? 0x20 : 0));
    hash_step(&mem_hash, (uint64_t)a | (uint64_t)kind << 32);
    if (dump_mem) {
        uint8_t rec[5] = {(uint8_t)a, (uint8_t)(a >> 8), (uint8_t)(a >> 16), (uint8_t)(a >> 24), kind};
        fwrite(rec, 1, 5, dump_mem);
    }
    n_mems++;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        /* Order matters: the open marker's first instruction is in its window, the close
           marker's is not. */
        if (pc == close_addr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_close, QEMU_PLUGIN_CB_NO_REGS, NULL);
        if (pc == open_addr)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_open, QEMU_PLUGIN_CB_NO_REGS, NULL);
        qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exec, QEMU_PLUGIN_CB_NO_REGS,
                                               (void *)(uintptr_t)pc);
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                         NULL);
    }
}

static void on_plugin_exit(qemu_plugin_id_t id, void *udata) {
    (void)id; (void)udata;
    if (active) fprintf(out, "unclosed window %u insns %llu\n", window, (unsigned long long)n_insns);
    fprintf(out, "end windows %u\n", window);
    fclose(out);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t *info, int argc,
                                                               char **argv) {
    (void)info;
    const char *out_path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "open=", 5) == 0) open_addr = strtoull(argv[i] + 5, NULL, 0);
        else if (strncmp(argv[i], "close=", 6) == 0) close_addr = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "out=", 4) == 0) out_path = argv[i] + 4;
        else if (strncmp(argv[i], "dump=", 5) == 0) dump_prefix = argv[i] + 5;
        else if (strncmp(argv[i], "dumpmax=", 8) == 0) dump_max = (unsigned)strtoul(argv[i] + 8, NULL, 0);
        else {
            fprintf(stderr, "ctrace: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (open_addr == UINT64_MAX || close_addr == UINT64_MAX || !out_path) {
        fprintf(stderr, "ctrace: needs open=, close= and out=\n");
        return -1;
    }
    out = fopen(out_path, "w");
    if (!out) {
        fprintf(stderr, "ctrace: cannot write %s\n", out_path);
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
    qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
    return 0;
}
