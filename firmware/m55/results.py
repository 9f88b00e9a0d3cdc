#!/usr/bin/env python3
"""Writes RESULTS.md from the output of run.sh, so the figures are never transcribed by hand.

    firmware/m55/run.sh | tee /tmp/m55.txt
    python3 firmware/m55/results.py /tmp/m55.txt > firmware/m55/RESULTS.md
"""
import re
import subprocess
import sys

PAPER_NTT = (285_002, 300_421)          # cycles per prime, forward / inverse (REFERENCE.md)
PAPER_ENC_SEEDED = 3_808_000            # 4.76 ms x 800 MHz, encode + seeded encrypt
PAPER_DEC = 4_304_000                   # 5.38 ms x 800 MHz, decrypt + decode
PAPER_NTT_RATIO = "2.55–2.79×"           # its scalar/vector NTT ratio (REFERENCE.md)
PAPER_RAM = (1536 * 1024, 0.27, 0.32)   # peak live set 27–32 % of 1536 KB (REFERENCE.md)

TABLE3_NAMES = {
    "encode_seeded_encrypt": "encode + seeded encrypt",
    "encode_symmetric_encrypt": "encode + classic symmetric encrypt",
    "encode_public_encrypt": "encode + public-key encrypt",
    "decrypt_decode": "decrypt + decode",
    "decrypt_seeded_decode": "decrypt seeded + decode",
}


def table3_section(lines, w):
    """Table 3: end to end with the scalar NTT against the Helium NTT, same image."""
    rows = {}
    ntt = {}
    for l in lines:
        if not l.startswith("TABLE3 | ") or l.startswith("TABLE3 | operation"):
            continue
        c = [x.strip() for x in l.split("|")[1:-1]]
        rows.setdefault(c[0], []).append(c[1:])
    names = {"seal4096": "Seal4096", "zeppelin4096": "Zeppelin4096", "seal8192": "Seal8192"}
    for l in lines:
        f = l.split()
        if len(f) == 6 and f[0] == "METRIC" and f[2] in ("ntt_forward", "ntt_inverse"):
            ntt.setdefault(names.get(f[1], f[1]), {})[(f[2], f[3])] = int(f[4])
    if not rows:
        return
    w("## Table 3 on target: end to end, scalar NTT against Helium NTT (same image)\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("== on target: the paper-tables image")), 0)
    tables_result = next((l for l in lines[start:] if l.startswith("RESULT ")), "RESULT line missing")
    w("The paper's Table 3 sets its client's end-to-end times with a scalar NTT beside those with its "
      "Helium NTT. Here the same image runs every operation twice on the same objects, with two workspaces "
      "that differ in the forward and inverse transforms only: `Mve` (the Helium NTT) and `ScalarNtt` "
      "(`src/scalar_ntt.rs`: zeppelin-ring's scalar `Portable` transforms, every other kernel Helium). "
      "Keystream excluded (the recorded bytes replayed), median of 11 runs; both runs must write the bytes "
      f"of the recording run. Image `paper_tables` (`src/bin/paper_tables.rs`; with Table 7): `{tables_result}`. "
      "**Instructions here, cycles there.**\n")
    for preset, rs in rows.items():
        paper = preset == "Zeppelin4096"
        head = "| operation | scalar NTT | Helium NTT | saved by the Helium NTT | ratio | stack bytes (scalar / Helium) |"
        sep = "|---|---:|---:|---:|---:|---:|"
        if paper:
            head += " paper, Helium NTT (cycles) |"
            sep += "---:|"
        w(f"**{preset}**\n")
        w(head)
        w(sep)
        for r in rs:
            scalar, helium = int(r[1]), int(r[2])
            line = (f"| {TABLE3_NAMES.get(r[0], r[0])} | {num(scalar)} | {num(helium)} | {num(scalar - helium)} | "
                    f"{r[3].replace('x', '×')} | {' / '.join(num(x) for x in r[4].split(' / '))} |")
            if paper:
                line += {"encode_seeded_encrypt": f" {num(PAPER_ENC_SEEDED)} |",
                         "decrypt_decode": f" {num(PAPER_DEC)} |"}.get(r[0], " |")
            w(line)
        w("")
    if ntt:
        w("The transforms alone, on each preset's own tables (largest median over its data primes; from the "
          "`METRIC ... ntt_*` lines):\n")
        w("| preset | forward scalar | forward Helium | ratio | inverse scalar | inverse Helium | ratio | paper fwd / inv (cycles, Helium) |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|")
        for preset, m in ntt.items():
            pf, mf = m[("ntt_forward", "portable")], m[("ntt_forward", "mve")]
            pi, mi = m[("ntt_inverse", "portable")], m[("ntt_inverse", "mve")]
            paper = f"{num(PAPER_NTT[0])} / {num(PAPER_NTT[1])}" if preset == "Zeppelin4096" else "—"
            w(f"| {preset} | {num(pf)} | {num(mf)} | {pf / mf:.2f}× | {num(pi)} | {num(mi)} | {pi / mi:.2f}× | {paper} |")
        w("")
    w(f"The paper's own scalar column is not in the sources this repository keeps (REFERENCE.md carries its "
      f"Helium end-to-end times, 4.76 ms and 5.38 ms at 800 MHz, and its scalar/vector NTT ratio, "
      f"{PAPER_NTT_RATIO} in cycles); its Helium figures stand beside the Helium column. The ratios here are "
      "in instructions, where one MVE instruction counts once, so they are not the paper's cycle ratios.\n")


def table7_section(lines, w):
    """Table 7: live memory per stage of encryption and decryption, measured on target."""
    rows = {}
    for l in lines:
        if l.startswith("TABLE7 | "):
            c = [x.strip() for x in l.split("|")[1:-1]]
            rows.setdefault(c[0], []).append(c[1:])
    if not rows:
        return
    w("## Table 7 on target: live memory per stage of encryption and decryption\n")
    w("Each stage is one client call, run on its own in the order a device runs them (software AES-CTR on "
      "both streams, Helium backend; `src/stages.rs`). **Stack**: the call's high-water mark by stack "
      "painting. **Static objects**: the objects live in that stage — what it reads or writes and the key "
      "kept for the next stage — at their exact sizes (`size_of` of the client's types, printed by the "
      "firmware). **Live** = stack + static objects. **Tables**: the read-only tables the stage reads (NTT "
      "tables of the data primes; the encoder's table of t and slot permutations), apart because a board "
      "keeps them in flash or DTCM. Bytes.\n")
    for preset, rs in rows.items():
        w(f"**{preset}**\n")
        w("| path | stage | stack | static objects | live | read-only tables | objects live (bytes) |")
        w("|---|---|---:|---:|---:|---:|---|")
        peak = {}
        for path, stage, stack, static, tables, objects in rs:
            live = int(stack) + int(static)
            kind = path.split()[0]
            if live > peak.get(kind, (0, ""))[0]:
                peak[kind] = (live, stage)
            objs = "; ".join(f"{' '.join(o.split()[:-1])} {num(o.split()[-1])}" for o in objects.split("; "))
            w(f"| {path} | {stage} | {num(stack)} | {num(static)} | {num(live)} | {num(tables)} | {objs} |")
        w("")
        w(f"Peak live memory: symmetric client {num(peak['symmetric'][0])} bytes ({peak['symmetric'][1]}), "
          f"public-key client {num(peak['public-key'][0])} bytes ({peak['public-key'][1]}).\n")
    total, lo, hi = PAPER_RAM
    w(f"Paper (its RAM figures, REFERENCE.md): peak live set 27–32 % of 1536 KB ({num(total)} bytes), i.e. {num(total * lo)}–"
      f"{num(total * hi)} bytes, stack below 2 KB, no heap. Its per-stage rows are not in the sources this "
      "repository keeps, so only that envelope stands beside the rows here.\n")


def num(x):
    return f"{int(x):,}"


def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
    except (OSError, IndexError):
        return "unknown"


def main():
    text = open(sys.argv[1]).read()
    lines = text.splitlines()
    result = next(l for l in lines if l.startswith("RESULT "))
    audit = next(l for l in lines if l.startswith("AUDIT RESULT"))
    calib = next(l for l in lines if l.startswith("INFO calibration"))
    sets = next(l for l in lines if l.startswith("INFO mve vs portable"))
    rows = [l.split("|")[1:-1] for l in lines if re.match(r"^TABLE \| \d+ \| \d+", l)]
    # general schedule: prime, portable/MVE forward, speedup, portable/MVE inverse, speedup
    ntt = [r for r in rows if len(r) == 7]
    # packed radix-4 kernels: prime, forward, inverse, stack forward, stack inverse
    packed = [[c.strip() for c in r] for r in rows if len(r) == 5]
    packed_count = re.search(r"emitted program: forward (\d+), inverse (\d+)", text)
    packed_cert = re.findall(r"INFO packed range certificate q=(\d+): max \|intermediate\| (\d+) \(([\d.]+)q\)", text)
    stack = next(l for l in lines if l.startswith("TABLE | stack bytes"))
    transpose = re.search(r"transpose \| (\d+) \| x3 per four-step transform = (\d+)", text)
    pointwise = re.search(r"pointwise mul n=4096 q=\d+ \| portable (\d+) \| mve (\d+) \| ([\d.]+)x", text)
    behz_sets = next(l for l in lines if l.startswith("INFO behz mve vs scalar twin"))
    behz_acc = re.search(r"behz accumulate n=4096 \(one prime\) \| scalar (\d+) \| mve (\d+) \| ([\d.]+)x", text)
    behz_fin = re.search(r"behz finish n=4096 \| scalar (\d+) \| mve (\d+) \| ([\d.]+)x", text)
    gauss_sets = next(l for l in lines if l.startswith("INFO gaussian mve vs scalar twin"))
    gauss = re.search(r"gaussian CDT scan n=4096 \(keystream excluded\) \| scalar (\d+) \| mve (\d+) \| ([\d.]+)x", text)
    ks = re.search(r"software AES-CTR (\d+) \(([\d.]+)/byte\) \| table AES-CTR (\d+) \(([\d.]+)/byte\)", text)
    chacha = re.search(r"chacha20 blocks4 \(256 bytes\) \| portable (\d+) \(([\d.]+)/byte\) \| mve (\d+) \(([\d.]+)/byte\) \| ([\d.]+)x \| mve stack (\d+) bytes", text)
    chacha_stream = re.search(r"ChaCha20<Mve> (\d+) \(([\d.]+)/byte\)", text)
    chacha_tests = [l for l in lines
                    if l.startswith("PASS ") and "chacha" in l.lower() and "round trip" not in l]
    presets = {}
    current = None
    for l in lines:
        m = re.match(r"^TABLE BFV client, preset (\w+)", l)
        if m:
            current = m.group(1)
            presets[current] = []
            continue
        if current and l.startswith("TABLE | ") and not l.startswith("TABLE | operation") and "---" not in l:
            presets[current].append([c.strip() for c in l.split("|")[1:-1]])
    memory = [[c.strip() for c in l.split("|")[1:-1]] for l in lines if l.startswith("MEMORY |")]
    sizes = {}
    in_sizes = False
    for l in lines:
        if l.startswith("== static memory per section"):
            in_sizes = True
            continue
        if in_sizes:
            if l.startswith("=="):
                break
            p = l.split()
            if len(p) >= 2 and p[0].startswith(".") and p[1].isdigit():
                sizes[p[0]] = int(p[1])

    out = []
    w = out.append
    w("# Zeppelin on the emulated Cortex-M55 (QEMU `mps3-an547`): results\n")
    w("Produced by\n\n```\nfirmware/m55/run.sh | tee /tmp/m55.txt\npython3 firmware/m55/results.py /tmp/m55.txt > firmware/m55/RESULTS.md\n```\n")
    w("`run.sh` builds the image (`thumbv8m.main-none-eabihf`, `+mve`, release, LTO), runs it under "
      "`qemu-system-arm -M mps3-an547 -nographic -icount shift=0 -semihosting-config enable=on,target=native`, "
      "runs the paper-tables image (Tables 3 and 7), the Seal8192 image, the six client-only images and the binary audit (`audit.sh`); this file is generated from its output. "
      f"Tools of this run: {version(['/usr/bin/rustc', '--version'])} (Debian `rustc-web`, `-Zbuild-std=core`), "
      f"{version(['arm-none-eabi-ld', '--version'])}, {version(['qemu-system-arm', '--version'])}.\n")
    w("**Units.** Figures here are **instructions retired under QEMU** (`-icount shift=0`: one instruction per ns "
      "of virtual time; SysTick at the board's 32 MHz ticks every 31.25 instructions; resolution one tick; "
      f"checked on target: {calib.split(': ', 1)[1]}). They are **not cycles**: QEMU models no pipeline, caches "
      "or wait states, and counts an MVE instruction once although the M55 executes it in beats. The paper's "
      "figures beside them are **cycles** on an STM32N6 (Cortex-M55 at 800 MHz, caches on, AES from the hardware "
      "engine through DMA). Different units side by side, as the issue asks; their ratio is not a speedup.\n")
    w("Every operation figure is the median of 11 runs. \"Keystream excluded\" replays the exact keystream bytes "
      "recorded from the software-AES run (a copy, under one instruction per byte); every variant with the AES "
      "secret stream is checked byte for byte against the software-AES run. The \"software\" column generates "
      "every keystream byte on the core with the fastest constant-time secret stream, ChaCha20 (RFC 8439) on "
      "the Helium kernel, on both streams (public `prng_type 0xA2`); its streams differ from AES's, so its "
      "outputs differ and are checked by round trips instead (and on the host against SEAL after the adapter "
      "expands the ChaCha20 `c1`).\n")
    w(f"## On-target tests: `{result}` (exit status 0)\n")
    w("- Instruction counter calibration (above).\n"
      "- zeppelin-ring NTT, Portable and MVE backends: products equal schoolbook negacyclic products (q = 7681 "
      "n = 64, 256; q = 134176769 n = 64; q = 1061093377 n = 16); forward and inverse equal host-computed "
      "evaluations (`vectors/gen_ntt_vectors.py`: plain Python, Horner at ψ^(2·br(j)+1)) for the five preset "
      "primes at n = 4096.\n"
      f"- MVE = Portable word for word: {sets.split(': ', 1)[1]} (n = 16 … 4096, random and all-0 / all-(q−1) "
      "inputs, five primes at n = 4096).\n"
      f"- BEHZ decryption tail, MVE (`ClientKernels::behz_accumulate` / `behz_finish` of `zeppelin_ring::mve::Mve`, behind "
      "`zeppelin::behz::accumulate` / `finish`) = scalar twin (`accumulate_scalar` / `finish_scalar`) word for "
      f"word: {behz_sets.split(': ', 1)[1]}, every level and prime of both presets (random, all-0 and "
      "top-of-range inputs).\n"
      "- Gaussian sampler, MVE CDT scan (`ClientKernels::cdt_scan` of `zeppelin_ring::mve::Mve`, behind "
      "`zeppelin::sampler::gaussian_from_words`) = scalar twin (`gaussian_from_word`) word for word: "
      f"{gauss_sets.split(': ', 1)[1]} (every CDT boundary and its neighbour, top bit clear and set, extremes, "
      "random words).\n"
      "- Range auditor: certificates for the five primes (largest intermediate 4q − 1, limit 2^31); refuses "
      "q = 1061093377 (4q > 2^31), which falls back to Portable and still matches.\n"
      "- Table AES-128: FIPS-197 C.1; its CTR stream equals RustCrypto `AesCtr128` for 64 seeds (incl. 128-bit "
      "counter wrap) with split fills.\n"
      "- **bfv KATs byte for byte** against `crates/zeppelin/tests/kats/<preset>/` (the files the host test uses, "
      "`include_bytes!`): `sk.bin`, `sk_ntt.bin`, `pk.bin`, `ct_seeded.bin`, `ct_symmetric.bin`, `ct_public.bin` "
      "for Seal4096 and Zeppelin4096, with software AES on both streams and again with the table-AES public "
      "stream; the pinned ciphertexts decrypt on target to the KAT slots.\n"
      "- ChaCha20: " + "; ".join(l[5:] for l in chacha_tests) + ".\n"
      "- Round trips of every path, also with ChaCha20 on both streams; all keystream variants with the AES "
      "secret stream give identical bytes for every operation.\n")
    w("## NTT: the packed radix-4 Helium kernels (n = 4096, the presets' device tables)\n")
    w("| prime | MVE packed fwd | MVE packed inv | stack fwd / inv (bytes) | goal (issue 14) | general schedule fwd / inv | paper fwd / inv (cycles) |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    general = {r[0].strip(): r for r in ntt}
    for r in packed:
        g = general.get(r[0])
        gen = f"{num(g[2].strip())} / {num(g[5].strip())}" if g else "—"
        paper = f"{num(PAPER_NTT[0])} / {num(PAPER_NTT[1])}" if r[0] != "268369921" else "—"
        w(f"| {r[0]} | {num(r[1])} | {num(r[2])} | {r[3]} / {r[4]} | ≤ 55,000 each | {gen} | {paper} |")
    w("")
    w("Generated by `crates/zeppelin-ring/src/mve/gen_ntt.py` (it writes `packed_kernel.rs`; its interpreter runs "
      "the emitted program against a reference NTT before writing; the generator counts "
      f"{num(packed_count.group(1))} / {num(packed_count.group(2))} instructions for the kernels alone, the rows "
      "above add the call). Five passes of two layers on four rows with each group's twiddles in core registers "
      "(`ldm`, `w` recovered from the stored Barrett companion `w' = round(w·2^31/q)` by one `smmulr`), "
      "3-instruction Barrett products (`vqrdmulh`, `vmul`, `vmla` by −q), then the last two layers on "
      "`vld4`-de-interleaved rows with per-lane twiddles, canonicalised and stored by `vst4` in natural order "
      "(the evaluation map is unchanged: SEAL's). The inverse runs Gentleman–Sande passes on the same table read "
      "backwards (ψ^-e = −ψ^(n−e)), `n^-1` folded into its last layer. Hardware loops (`dls`/`le`) only; the "
      "loads of a block are interleaved with its first products, but there is no cross-iteration software "
      "pipelining (QEMU's instruction count does not reward it; on silicon it would). Range certificates "
      "(exact integer bounds of every intermediate, limit 2^31 − 1): "
      + ", ".join(f"q = {q}: {num(b)} ({r}q)" for q, (b, r) in dict((q, (b, r)) for q, b, r in packed_cert).items())
      + ". The plan certifies every q < 2^28 and refuses larger moduli. Tables: 16 KB of companions per prime "
      "beside the Montgomery tables; Seal8192 keeps the general schedule (its companions would not fit DTCM).\n")
    w("## NTT: portable vs MVE general schedule, same image, same tables (n = 4096)\n")
    w("| prime | portable fwd | MVE fwd | speedup | portable inv | MVE inv | speedup | paper fwd (cycles) | paper inv (cycles) |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in ntt:
        r = [c.strip() for c in r]
        paper = (num(PAPER_NTT[0]), num(PAPER_NTT[1])) if r[0] != "268369921" else ("—", "—")
        w(f"| {r[0]} | {num(r[1])} | {num(r[2])} | {r[3].replace('x', '×')} | {num(r[4])} | {num(r[5])} | "
          f"{r[6].replace('x', '×')} | {paper[0]} | {paper[1]} |")
    w("\nInstructions here, cycles there (the paper gives one figure per direction for its primes). The paper's "
      "scalar/vector ratio is 2.55–2.79× in cycles; the ratio here is in instructions, where an MVE instruction "
      "counts once, so the two ratios are not comparable.\n")
    w(f"Pointwise product n = 4096: portable {num(pointwise.group(1))}, MVE {num(pointwise.group(2))} "
      f"({pointwise.group(3)}×). Stack: {stack.split('|', 2)[2].strip(' |').replace(' | ', ', ')} bytes.\n")
    w("BFV hot loops beyond the NTT, scalar twin vs MVE, same image (instructions, median of 11 runs; BEHZ "
      "decryption tail on Zeppelin4096 at the full level; the Gaussian's keystream excluded):\n")
    w("| step | scalar twin | MVE | ratio |\n|---|---:|---:|---:|")
    w(f"| Gaussian sampler CDT scan (4,096 samples, 42 entries each) | {num(gauss.group(1))} | "
      f"{num(gauss.group(2))} | {gauss.group(3)}× |")
    w(f"| accumulate (steps 1–2, per prime) | {num(behz_acc.group(1))} | {num(behz_acc.group(2))} | "
      f"{behz_acc.group(3)}× |")
    w(f"| finish (steps 3–5, once per decryption) | {num(behz_fin.group(1))} | {num(behz_fin.group(2))} | "
      f"{behz_fin.group(3)}× |\n")
    mve_fwd = int(ntt[0][2])
    w(f"Schedule choice, with figures: the paper's 64 × 64 four-step pays three transposes per transform (10% of "
      f"its forward time). Here a plain in-place scalar 64 × 64 transpose costs {num(transpose.group(1))} "
      f"instructions, {num(transpose.group(2))} per transform: {100 * int(transpose.group(2)) / mve_fwd:.0f}% of "
      f"the whole MVE forward transform ({num(mve_fwd)}). The schedule here keeps the paper's 64-column blocking "
      "and drops the transposes: the first six layers run on 8-column strips (every vector access a contiguous "
      "16-byte piece of a row; all strip layers finish on one strip before the next), the last six as one kernel "
      "sequence per contiguous 256-byte row, the last two layers fused in registers (`vld4` de-interleave, "
      "per-lane twiddles) with the final reduction. Butterfly loops are counted asm loops (`subs`/`bne` on the "
      "public count, twiddle and constants broadcast once per group). On QEMU strided strip accesses cost "
      "nothing extra; on a cached core the 16 KB residue fits the M55's data cache, but that was not measured "
      "on silicon.\n")
    paper_col = {"encode + seeded encrypt": f"{num(PAPER_ENC_SEEDED)} (4.76 ms)",
                 "decrypt + decode": f"{num(PAPER_DEC)} (5.38 ms)"}
    for preset, k in (("Zeppelin4096", "the paper's four primes"), ("Seal4096", "default preset, three primes")):
        rows = presets[preset]
        w(f"## BFV client, {preset} ({k})\n")
        head = "| operation | software (ChaCha20 on both streams) | software AES-CTR (both streams) | table AES public stream | keystream excluded | keystream bytes public / secret | stack bytes (software / sw AES / table / excluded) |"
        sep = "|---|---:|---:|---:|---:|---:|---:|"
        if preset == "Zeppelin4096":
            head += " paper (cycles) |"
            sep += "---:|"
        w(head)
        w(sep)
        for r in rows:
            name = r[0] + (" (incl. expand_ct1)" if r[0] == "decrypt seeded + decode" else "")
            kb = " / ".join(num(x) for x in r[5].split(" / "))
            st = " / ".join(num(x) for x in r[6].split(" / "))
            line = f"| {name} | {num(r[1])} | {num(r[2])} | {num(r[3])} | {num(r[4])} | {kb} | {st} |"
            if preset == "Zeppelin4096":
                line += f" {paper_col.get(r[0], '')} |"
            w(line)
        w("")
        if preset == "Zeppelin4096":
            enc = {r[0]: r for r in rows}
            pk_total = int(enc["encode"][4]) + int(enc["public-key encrypt"][4])
            w("Paper cycles are its milliseconds × 800 MHz (REFERENCE.md). Its keystream comes from the hardware AES "
              "engine overlapped by DMA, so the \"keystream excluded\" column is the one to set beside it. The "
              "paper's public-key encode + encrypt is about 7.0 M cycles by its own ratios (5.4× below "
              "SEAL-Embedded's 38.0 M A7 cycles, 6.7× below its 47.2 M M4 cycles); here encode + public-key "
              f"encrypt is {num(enc['encode'][4])} + {num(enc['public-key encrypt'][4])} = {num(pk_total)} "
              "instructions with the keystream excluded.\n")
    if "Seal8192" in presets:
        w("## BFV client, Seal8192 (n = 8192, seven primes; its own image, `src/bin/seal8192.rs`)\n")
        w("The image's KATs (software AES-CTR on both streams) reproduce `crates/zeppelin/tests/kats/seal8192/` "
          "word for word on target. Instructions:\n")
        w("| operation | software (ChaCha20 on both streams) | software AES-CTR (both streams) | stack bytes (software / sw AES) |\n|---|---:|---:|---:|")
        for r in presets["Seal8192"]:
            st = " / ".join(num(x) for x in r[3].split(" / "))
            w(f"| {r[0]} | {num(r[1])} | {num(r[2])} | {st} |")
        w("")
    w(f"Keystream alone (4,096 bytes in 32-byte fills, as the bfv buffer asks for them): software AES-CTR "
      f"(RustCrypto `aes` fixslice + `ctr`, constant time) {num(ks.group(1))} instructions = {ks.group(2)} per "
      f"byte; table AES-CTR (`src/table_aes.rs`, public stream only) {num(ks.group(3))} = {ks.group(4)} per byte. "
      "In the \"table AES public stream\" column the secret stream is still the constant-time software AES.\n")
    w(f"ChaCha20 for the secret stream (`zeppelin::ChaCha20<Mve>`: key = the secret seed, nonce 0, counter from 0; "
      f"`prng_e` never leaves the device, so its generator is the device's choice): one four-block call "
      f"(`ClientKernels::chacha20_blocks4`, 256 bytes) costs {num(chacha.group(3))} instructions on the Helium "
      f"kernel = {chacha.group(4)} per byte (portable block function {num(chacha.group(1))} = {chacha.group(2)} "
      f"per byte, {chacha.group(5)}×; Helium stack {chacha.group(6)} bytes); through the secret PRNG as the "
      f"samplers read it (`SecretPrng::fill_words`, one kernel call per 256-byte refill straight into the "
      f"PRNG's buffer) {num(chacha_stream.group(1))} instructions per 4,096 bytes = {chacha_stream.group(2)} per byte, "
      f"against {ks.group(2)} for the software AES. The kernel (`zeppelin-ring/src/mve/chacha_kernel.rs`, written "
      "by `gen_chacha.py`) is straight-line: one state word of the four blocks per Q register, rotations by "
      "`vrev32.16` (16) and `vshl` + `vsri`, spills into the output buffer, scatter stores that write the blocks "
      "in stream order. The same generator serves the public stream `prng_a` in the `software` column: the "
      "seeded ciphertext and the public key then record `prng_type 0xA2` (ChaCha20) instead of `0xA1` "
      "(AES-128-CTR), and the host adapter (`zeppelin adapt`, `zeppelin::expand_seeded`) expands whichever "
      "the byte names; the AES columns keep `0xA1` for servers that expect it.\n")
    w("Why a table AES is acceptable for the public stream: its key and counter are the public seed, sent in the "
      "clear with the ciphertext (or public key); cache-timing leakage of key- and data-dependent table indices "
      "can only reveal what the observer already has. The secret stream (`prng_e`: secret key, errors, `u`) "
      "keeps the constant-time software AES (or a board's AES peripheral). `Bfv<P, A, E>` takes the two as "
      "separate type parameters and `E` requires the `SecretKeystream` marker, which the table AES does not "
      "implement, so it cannot be plugged into the secret stream (a compile_fail doc test shows it).\n")
    table3_section(lines, w)
    w("## Memory\n")
    w("Client-only images (`src/bin/client_*`: keys, workspace, one ciphertext, slots, plaintext; no test data), "
      "`arm-none-eabi-size -A`, bytes:\n")
    w("| image | static RAM (.data + .bss + .uninit) | flash (.vector_table + .text + .rodata + .data) | NTT tables (.twiddles, read-only, DTCM) | goal |")
    w("|---|---:|---:|---:|---|")
    for m in memory:
        name = m[0]
        ram = int(m[1].split()[1])
        flash = int(m[2].split()[1])
        dtcm = int(m[3].split()[2])
        goal = ("RAM ≤ 256 KB: " + ("met" if ram <= 256 * 1024 else "NOT met")) if "symmetric" in name and "8192" not in name else "reported"
        if name == "client_symmetric_zeppelin4096":
            goal += " (paper: ~470 KB)"
        w(f"| {name} | {num(ram)} | {num(flash)} | {num(dtcm)} | {goal} |")
    sym_stacks = []
    chacha_stacks = []
    four_k = [rows for name, rows in presets.items() if name != "Seal8192"]
    for preset in four_k:
        for r in preset:
            chacha_stacks.append((int(r[6].split(" / ")[0]), r[0]))
            if r[0] != "public-key encrypt" and r[0] != "keygen (public key)":
                sym_stacks.append((int(r[6].split(" / ")[1]), r[0]))
    worst = max(sym_stacks)
    worst_chacha = max(chacha_stacks)
    worst_excluded = max(int(r[6].split(" / ")[3]) for preset in four_k for r in preset)
    w(f"\nStack high-water marks (stack painting per operation, tables above): every symmetric-path operation "
      f"stays below 2 KB with software AES (largest: {worst[1]}, {num(worst[0])} bytes); with ChaCha20 on both "
      f"streams every operation needs at most {num(worst_chacha[0])} bytes "
      f"({worst_chacha[1]}); with the keystream "
      f"from elsewhere (a board's AES peripheral) every operation, public-key path included, needs at most "
      f"{num(worst_excluded)} bytes. No heap anywhere.\n")
    w("The NTT tables are placed in DTCM (`.twiddles`), as the paper places its twiddle planes; a board would "
      "copy them there from flash at start-up, so count them in flash too. The full test image (`zeppelin-m55`): "
      + ", ".join(f"`{k}` {num(v)}" for k, v in sizes.items()) +
      " (`.bulk`: NTT vectors and KAT files, test-only, outside the 512 KiB code memory; `.bss`: the objects "
      "of both presets, keystream tapes and test buffers).\n")
    table7_section(lines, w)
    metrics = next((l for l in lines if l.startswith("METRICS RESULT")), None)
    if metrics:
        w("## Machine-readable figures\n")
        w("`run.sh` prints one `METRIC <preset> <operation> <variant> <instructions> <stack-bytes>` line per "
          "figure and one `RAM <image> <bytes>` line per client image (README: \"Machine-readable figures\"); "
          f"`check_metrics.py` on this run: `{metrics}`.\n")
    w("## Binary audit (`audit.sh` -> `security/audit`, rules in `security/audit/engine.py`)\n")
    w(f"`{audit}`. Each of the eight images (test, Seal8192, six clients) is audited over the call graph "
      "walked from its roots (BFV keygen, encoder, symmetric/seeded/public-key encryption, decryption, "
      "samplers and keystream; for the clients, the whole entry point) with rules R1 (variable latency), "
      "R2 (control flow), R3/R4 (indexed loads/stores, MVE gathers/scatters) and R5 (loop bounds). Every "
      "finding carries a reviewed reason (`security/audit/reviews.py`), the counts per function and rule "
      "are pinned (`security/audit/expected/`), and the test image's negative controls must each be "
      "flagged by exactly their rule. Per-image figures: `reports/security/audit.md`.\n")
    w("## Findings worth knowing\n")
    w("- With `+mve`, LLVM's auto-vectoriser miscompiled the bfv crate's constant-time CDT Gaussian sampler in "
      "some inlining contexts: every sample came out +4 (one 4-lane group of thresholds counted wrongly). Only "
      "the public-key-encryption KAT caught it. The firmware builds with `-C no-vectorize-loops -C "
      "no-vectorize-slp`; Helium code is the hand-written asm only. Root cause not isolated further.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
