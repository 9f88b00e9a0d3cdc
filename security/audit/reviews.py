"""Reviewed findings of the binary audit: why each kind of finding depends only on public
values. An entry covers the findings of its rules whose source location (innermost frame in
this repository, else the library crate: see engine.attribute) matches `where` (a regex on the
path, or on `path:line` if `line` is given) and, if given, whose audited function matches
`func`. The first matching entry wins; a finding that matches none fails the audit. How many
findings each function has per rule is pinned separately (expected/<image>.json), so a new
finding under an existing review still fails until it is re-reviewed and re-pinned.

`known: True` marks a finding that is NOT accepted as public: it is pinned so that the audit
tracks it, and reported as open.
"""

REVIEWS = [
    # ---- RBLWE CCA2 ------------------------------------------------------------------------
    {
        "id": "rblwe-cca2-result-propagation",
        "rules": ["R2", "R5"],
        "where": r"crates/rblwe/src/cca\.rs:(3[89][0-9]|4[0-9][0-9])$",
        "line": True,
        "reason": "CCA2 decryption's `?` on the Results of cpa_decrypt, kdf and encrypt_derand, and "
                  "the loop-completion checks: they branch only on detected faults, key checks or a "
                  "TRNG failure, never on ciphertext validity. The validity decision (the two masks "
                  "and the selection, once merged by the compiler into `orrs ; beq.w`, review F1) "
                  "is checked on every compiled instance by security/cca-branch: no conditional "
                  "branch between the last comparison and the output stores.",
    },
    # ---- Zeppelin ring (M55) ---------------------------------------------------------------
    {
        "id": "ring-length-checks",
        "rules": ["R2"],
        "where": r"crates/zeppelin-ring/src/(error|mve/pointwise|mve/arith)\.rs$",
        "reason": "length and certification checks (`check_len`, `a.len() != out.len()`, "
                  "`len % 4`, `certify_pointwise(q)`): slice lengths and the modulus are public "
                  "(compile-time sizes and parameters); the failing path returns an error.",
    },
    {
        "id": "ring-ntt-schedule",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin-ring/src/(mve/ntt|mve/schedule|ntt|mve/mod|mve/packed|mve/arith)\.rs$",
        "reason": "dispatch of the Helium NTT over its certified layer schedule "
                  "(`Schedule::steps_for`, `forward`/`inverse`): loops and branches over n, the "
                  "layer plan, strides and twiddle offsets, and loads from the schedule and table "
                  "structs at those offsets (and per-prime constants by prime index). All are "
                  "functions of the public parameters; the secret coefficients are only touched "
                  "by the asm kernels (strip_layer, row_layer, *_quad_row64, scale_pass, "
                  "pointwise_pass, behz_*_pass, cdt_scan_pass), which are on the walked graph "
                  "with zero findings.",
    },
    {
        "id": "ring-packed-ntt-twiddle-gather",
        "rules": ["R3"],
        "where": r"^\?$",
        "func": r"^zeppelin_mve_ntt4096_inverse$",
        "reason": "the packed inverse NTT's per-lane pass reads the forward twiddle table "
                  "backwards with lanes reversed: `vldrw.u32 q4, [q7, #-16]!`, a vector-base "
                  "gather whose four addresses are set once by `vddup` from the table's address "
                  "and stepped by the immediate -16 (gen_ntt.py, inv_vector_pass). The addresses "
                  "depend only on the loop position, never on the coefficients; the kernel has "
                  "no other finding (global_asm: no DWARF lines, hence the `?` location).",
    },
    {
        "id": "ring-portable-kernels",
        "rules": ["R1", "R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin-ring/src/portable\.rs$",
        "reason": "portable NTT / pointwise loops inlined into the MVE dispatch (the n < 64 and "
                  "plaintext-modulus paths, and the tails): element addresses are the loop "
                  "positions and twiddle indices (`a[j]`, `table.forward[groups + group]`), loop "
                  "bounds are n and the layer count (`groups <<= 1`: a doubling counter R5 does not "
                  "recognise), and the one R1 is `chunks_exact_mut(2 * half)`'s division of the "
                  "public length by the public chunk size. Coefficients enter only the "
                  "branch-free Montgomery/ct::reduce_once arithmetic.",
    },
    # ---- Zeppelin BFV (M55) ----------------------------------------------------------------
    {
        "id": "bfv-glue",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin/src/(ops|behz|ciphertext)\.rs$",
        "reason": "BFV operation glue: `?` on the Results of length/level checks, loops over "
                  "the data primes and rows (`i * P::N..(i + 1) * P::N`), level tests "
                  "(`level == 0 || level > K`, `i < lc.level`) and per-prime constants loaded by "
                  "prime index (`lc.delta_mont[i]`, `behz_scale_mont[i]`). Level, prime index and "
                  "row offsets are public; coefficients pass through the kernels and the "
                  "branch-free small_mod/scaled_plain arithmetic.",
    },
    {
        "id": "bfv-keys-state",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin/src/keys\.rs$",
        "reason": "key objects: the `set` flag (whether a key was generated: public state), the "
                  "per-row NTT calls and `check_rows`, which scans public-key and ciphertext rows (public "
                  "input being validated) for a value "
                  ">= q (early exit on a public row, error path).",
    },
    {
        "id": "bfv-encoder-permutation",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin/src/(encoder|plaintext)\.rs$",
        "reason": "encoder: the slot permutation is applied by following the cycles of the "
                  "public slot map (`visited` bits, `src == start`, `values[i] = values[src]`, "
                  "`coeffs[pos] = v`): every address and branch is a function of the public map, "
                  "the slot values are only moved; the t-table NTT is the ring's (see its "
                  "reviews). plaintext.rs: `check_below_t` accumulates a branch-free `bad` mask "
                  "and branches once on it; only on failure (an error naming the first bad slot) "
                  "does it search with `position`.",
    },
    {
        "id": "bfv-prng-buffering",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin/src/prng\.rs$",
        "reason": "keystream plumbing: `Buffered::next_u32`'s refill test and byte reads at its "
                  "read position (a count of words read), the `ctr`/`cipher` crates' block "
                  "buffer inside `AesCtr128::fill` (position/length arithmetic and copies at "
                  "byte offsets: how many bytes were asked for) and the fixsliced key schedule "
                  "loops of `from_seed` (fixed round counts). Addresses and trip counts are "
                  "byte counts, never keystream or key values; the cipher core "
                  "(aes::soft::fixslice::*) has no findings except its round loop below.",
    },
    {
        "id": "bfv-public-uniform-sampler",
        "rules": ["R2", "R4", "R5"],
        "where": r"crates/zeppelin/src/sampler\.rs:(4[89]|5[0-9]|6[0-4])$",
        "line": True,
        "reason": "sample_uniform's refill loop (`while filled < out.len()` around "
                  "`read_words` and the backend's `uniform_accept`, whose scalar loop keeps "
                  "`candidate < q`: variable trip count) runs on the PUBLIC stream only (the "
                  "mask `a` is public; its seed travels with the ciphertext), by type: it takes "
                  "a PublicPrng.",
    },
    {
        "id": "bfv-ternary-blocks",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin/src/sampler\.rs:(8[0-9]|90)$",
        "line": True,
        "reason": "sample_ternary's blocks: GAUSSIAN_BLOCK keystream words per `fill_words` "
                  "call, then one branch-free `ternary_from_word` per word. The loop bounds are "
                  "the public lengths (n, the block size), and the indexed loads and stores are "
                  "at the word's position in the block (a counter), never at a keystream value.",
    },
    {
        "id": "ring-client-default-kernels",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/zeppelin-ring/src/client\.rs$",
        "line": False,
        "reason": "the ClientKernels default methods (encrypt_finish, uniform_accept, "
                  "cdt_scan_symmetric) and the scalar loops they run, as the portable kernels "
                  "(see ring-portable-kernels; uniform_accept on the public stream only): rows "
                  "indexed by the coefficient counter, branches on lengths, never on a residue.",
    },
    {
        "id": "bfv-lift-small-loop",
        "rules": ["R5"],
        "where": r"crates/zeppelin/src/sampler\.rs:1[45][0-9]$",
        "line": True,
        "reason": "lift_small's loop over the n small coefficients: a spilled counter of the "
                  "public length that R5's register tracking does not follow; the lift itself "
                  "is the branch-free `small_mod`.",
    },
    {
        "id": "aes-round-loop",
        "rules": ["R5"],
        "where": r"^aes$",
        "reason": "RustCrypto aes fixslice32: the round loop of aes128_encrypt (fixed count of "
                  "rounds, a spilled counter); the bitsliced rounds themselves are branch-free.",
    },
    {
        "id": "hash-block-buffer",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"^(block-buffer|generic-array|sha2|sha3|keccak|digest|hkdf|hmac)$",
        "reason": "hash/KDF plumbing (block-buffer position, length padding, copies at byte "
                  "offsets): functions of the message length, which is fixed by the parameter "
                  "set; the compression functions are branch-free.",
    },
    {
        "id": "compiler-builtins-memcmp",
        "rules": ["R2", "R5"],
        "where": r"^compiler-builtins$",
        "func": r"^(memcmp|bcmp)$",
        "reason": "memcmp's own loop exits at the first difference; every CALL of it is a finding "
                  "at the call site (R2), reviewed there: the only callers are test checks "
                  "(the size probe's `out == message`).",
    },
    {
        "id": "compiler-builtins-mem",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"^compiler-builtins$",
        "reason": "memcpy/memset/memclr (`__aeabi_mem*`, compiler_builtins::mem): branches and "
                  "loops on the length and the alignment of the pointers, both public (fixed-size "
                  "objects and rows); the bytes are only moved.",
    },
    {
        "id": "core-iterators",
        "rules": ["R2", "R5"],
        "where": r"^core$",
        "reason": "core iterator/slice plumbing with no repository frame (out-of-line copies): "
                  "loop ends of slice iterators (pointer == end) and Range steps over public "
                  "lengths.",
    },
    # ---- firmware glue ---------------------------------------------------------------------
    {
        "id": "m55-bench-glue",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"firmware/m55/src/bfv_bench\.rs$",
        "reason": "the test image's benchmark wrappers: branches on the Results of the "
                  "operations they call (public: errors are returned to the caller).",
    },
    {
        "id": "m55-client-test-glue",
        "rules": ["R1", "R2", "R3", "R4", "R5"],
        "where": r"firmware/m55/src/(bin/\.\./)?client\.rs$",
        "reason": "the client images' test glue around the operations: filling the slots with "
                  "the test readings, the `and_then` chain's Result branches, and the round-trip "
                  "comparison `slots_are_readings` (an early-exit compare of the decrypted test "
                  "slots: it is the image's PASS/FAIL check, not part of the client API).",
    },
    {
        "id": "m55-table-aes-public-stream",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"firmware/m55/src/table_aes\.rs$",
        "reason": "the table AES is reachable only as the PUBLIC stream `A` of the test image's "
                  "`Bfv<P, TableAesCtr128>` instances (it expands the public seed of `a`); the "
                  "type system refuses it as the secret stream (`SecretKeystream`, compile_fail "
                  "doc test), so its secret-indexed table loads index public data.",
    },
    # ---- RBLWE (M33) -----------------------------------------------------------------------
    {
        "id": "rblwe-ring-positions",
        "rules": ["R3", "R4", "R5"],
        "where": r"crates/rblwe/src/arith\.rs$",
        "reason": "ring-binary-LWE arithmetic: `mul_binary`/`mul_general` read the extended "
                  "operand at `ext[n - i + k]` and write `out[k]` for the public loop positions i "
                  "and k; the secret bit `bit(b, i)` (byte `i >> 3`, public index) only becomes a "
                  "mask. `add_bits`/`spread`/`extend`/`reduce` likewise index by position.",
    },
    {
        "id": "rblwe-cpa-checks",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/rblwe/src/cpa\.rs$",
        "reason": "CPA layer: `check_len`/`check_range` on ciphertext and public-key bytes "
                  "(public input), the byte loops of diff_forward/diff_reverse (addresses are "
                  "positions; the difference is OR/ADD-accumulated without branching), Result "
                  "branches on pool errors, the loop-completion fault checks (`iterations != "
                  "N`: equal to N unless a fault hit), and `check_binary_secret`'s weight test "
                  "in key generation: a candidate secret whose weight is outside [n/8, 7n/8] "
                  "(probability < 2^-90, or a stuck key) is refused with an error, which reveals "
                  "only that the discarded candidate was rejected.",
    },
    {
        "id": "rblwe-cca-glue",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/rblwe/src/cca\.rs$",
        "reason": "CCA2 glue outside the selection: `?` on the Results of cpa_decrypt, kdf and "
                  "encrypt_derand (pool and fault errors, never ciphertext validity: an invalid "
                  "ciphertext takes the implicit-rejection value, not an error), the XOR loops "
                  "over the fixed-size message/keystream (positions), the output fault check "
                  "(`diff != 0 || stores != N/8`: true only under a fault) and the zeroizing "
                  "stores.",
    },
    {
        "id": "rblwe-masked-glue",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/rblwe/src/masked\.rs$",
        "reason": "masked decryption and sharing: Result branches on pool errors, "
                  "loop-completion fault checks, and the share-packing loops (`m0[k >> 3] |= b0 << "
                  "(k & 7)`, four random bytes per word at position k): addresses are bit "
                  "positions, the shared values enter only XOR/AND and the ISW gadget (checked "
                  "separately by firmware/m33/check-gadget.py).",
    },
    {
        "id": "rblwe-entropy-pool",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"crates/rblwe/src/entropy\.rs$",
        "reason": "the entropy pool's buffer positions (`start == end`, `used == 32`, `written "
                  "< len`): counts of bytes drawn, independent of their values.",
    },
    {
        "id": "m33-probe-glue",
        "rules": ["R2", "R3", "R4", "R5"],
        "where": r"firmware/m33/src/",
        "reason": "the size-probe image's entry point and the simulated TRNG: `if let Ok` on "
                  "each stage's Result and the final round-trip check (the image's PASS/FAIL).",
    },
]
