"""The audited images: where each ELF comes from, the roots of its secret path (regexes on
demangled names; each must match at least one function of that ELF, so a root that vanished
by inlining is a failure, not a pass) and its negative controls (function -> the one rule
that must flag it)."""

# Never entered by the call-graph walk: reached only when the program ends or reports
# (Rust's failed-check routines and formatting, semihosting output). Their callers' branches
# to them are R2's bounds-check heuristic or reviewed findings.
STOP = [
    r"^core::panicking::", r"^core::fmt::", r"^<core::fmt::", r"^core::slice::index::slice_.*fail",
    r"^core::result::unwrap_failed", r"^core::option::(unwrap|expect)_failed", r"^core::str::",
    r"cortex_m_semihosting::", r"^zeppelin_harness::report::", r"^rust_begin_unwind$", r"::panic$",
    r"::client::finish$", r"^__cortex_m_rt_", r"^cortex_m::",
]

_HARNESS = "zeppelin_harness::audit_controls::"
# Core-ISA controls (firmware/harness/src/audit_controls.rs), in both test images.
CORE_CONTROLS = {
    _HARNESS + "leaky_udiv": "R1",
    _HARNESS + "leaky_vdiv": "R1",
    _HARNESS + "leaky_udiv64": "R1",
    "zeppelin_audit_leaky_vsqrt": "R1",
    _HARNESS + "leaky_branch": "R2",
    _HARNESS + "leaky_secret_panic": "R2",
    "zeppelin_audit_leaky_it_return": "R2",
    "zeppelin_audit_leaky_table_branch": "R2",
    _HARNESS + "leaky_table_load": "R3",
    _HARNESS + "leaky_sbox_offset": "R3",
    _HARNESS + "leaky_store": "R4",
    _HARNESS + "leaky_store_offset": "R4",
    "zeppelin_audit_leaky_bitlen": "R5",
    "zeppelin_audit_leaky_loop_exit": "R5",
    "zeppelin_audit_leaky_loop_guard": "R5",
}
# Helium controls (firmware/m55/src/audit_controls.rs), in the M55 test image.
MVE_CONTROLS = {
    "zeppelin_audit_leaky_gather": "R3",
    "zeppelin_audit_leaky_scatter": "R4",
}

M55 = "target-m55/thumbv8m.main-none-eabihf/release/"
M33 = "target-rblwe-m33/thumbv8m.main-none-eabihf/release/"

_BFV_OPS = r"<zeppelin::ops::Bfv<.*>>::(generate_secret_key_with|generate_public_key_with|encrypt_symmetric_with|encrypt_seeded_with|encrypt_public_with|decrypt|decrypt_seeded)(::<.*>)?"
_BFV_LEAVES = [
    r"zeppelin::encoder::(encode|decode)::<.*>",
    r"zeppelin::sampler::sample_ternary::<zeppelin::prng::AesCtr128>",
    r"zeppelin::sampler::sample_gaussian::<zeppelin::prng::AesCtr128, .*>",
    r"zeppelin::sampler::lift_small",
    r"<zeppelin::prng::AesCtr128 as zeppelin::prng::Keystream>::(fill|from_seed)",
    r"<zeppelin::prng::SecretPrng>::fill_words",
    # The ChaCha20 secret stream (the `software` variant): its samplers, its word reader
    # (ChaCha20::fill inlined) and the Helium four-block kernel.
    r"zeppelin::sampler::sample_ternary::<zeppelin::prng::ChaCha20<zeppelin_ring::mve::Mve>>",
    r"zeppelin::sampler::sample_gaussian::<zeppelin::prng::ChaCha20<zeppelin_ring::mve::Mve>, .*>",
    r"<zeppelin::prng::SecretPrng<zeppelin::prng::ChaCha20<zeppelin_ring::mve::Mve>>>::fill_words",
    r"^zeppelin_ring::mve::chacha_kernel::chacha20_blocks4_pass$",
]

IMAGES = {
    # The M55 test image: the BFV operations out of line (both 4096 presets, both public
    # streams), the bench wrappers that inline key generation and the encoder with the real
    # secret streams (software AES and ChaCha20), and the leaves.
    "m55-test": {
        "elf": M55 + "zeppelin-m55",
        "roots": [_BFV_OPS, r"zeppelin_m55::bfv_bench::op_\w+::<zeppelin::params::\w+, (\w+::\w+::\w+|zeppelin::prng::ChaCha20<zeppelin_ring::mve::Mve>), zeppelin::prng::(AesCtr128|ChaCha20<zeppelin_ring::mve::Mve>)>"] + _BFV_LEAVES,
        "controls": {**CORE_CONTROLS, **MVE_CONTROLS},
    },
    "m55-seal8192": {
        "elf": M55 + "seal8192",
        # The operations with ChaCha20 on both streams are inlined into the image's wrappers.
        "roots": [_BFV_OPS, r"^seal8192::op_\w+::<zeppelin::prng::ChaCha20<zeppelin_ring::mve::Mve>, zeppelin::prng::ChaCha20<zeppelin_ring::mve::Mve>>$"] + _BFV_LEAVES,
    },
}
# The six client images inline the operations into the entry point: the whole entry point
# (keygen, encode, encryption, decryption, decode and the test glue) is the root.
for _path in ("symmetric", "public"):
    for _preset in ("seal4096", "zeppelin4096", "seal8192"):
        _name = f"client_{_path}_{_preset}"
        IMAGES[f"m55-{_name}"] = {"elf": M55 + _name, "roots": [rf"{_name}::__cortex_m_rt_main"]}

# The M33 test image: CCA2 decryption (plain and masked key), masked and CPA decryption,
# key generation, for the three parameter sets; the deliberately branchy CPA stage of the
# ablation is not a root (it exists to show the leak).
IMAGES["m33-test"] = {
    "elf": M33 + "rblwe-m33",
    "roots": [
        r"rblwe::cca::decrypt(_reporting_output)?::<.*>",
        r"<rblwe::masked::MaskedSecretKey<.*>>::(decrypt|keygen|share)::<.*>",
        r"rblwe::cca::(keygen|keygen_masked)::<.*>",
        r"rblwe::cpa::decrypt::<.*ConstantTime.*>|rblwe::cpa::decrypt::<.*Config<true, .*>",
    ],
    "controls": dict(CORE_CONTROLS),
}
# The size-probe images (one stage each, everything inlined into the entry point): the
# branch-free CPA stage ("default"), the hardened CCA2 stage and the masked CCA2 stage.
for _stage, _label in (("probe-branch-free", "default"), ("probe-cca", "hardened"), ("probe-masked", "masked")):
    IMAGES[f"m33-{_label}"] = {"elf": M33 + f"size-probe-{_stage}", "roots": [r"size_probe::__cortex_m_rt_main"]}
