#!/usr/bin/env python3
"""Writes reports/security/fault.md and the PNG plots from campaign.py's JSON results.

Exit status 1 if the hardened campaign has any forgery or silent corruption (errors with an
unerased output are reported), if a planned fault was never injected, if no loop-completion counter fired,
or if the negative control (no fault hardening) releases no forgery.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CLASSES = ["correct", "detected+erased", "implicit rejection", "crash/hang",
           "error, not erased", "silent corruption", "forgery released"]
# The goal (issue 11): no forgery and no silent corruption. An error whose output still holds
# data is reported beside them but is not a release of unauthenticated plaintext.
FAILING = ["silent corruption", "forgery released"]
COLOURS = ["#4c9a2a", "#2a6f9a", "#8fbcd4", "#999999", "#e0a030", "#d04020", "#800000"]
MODELS = ["skip", "regflip", "flagflip", "zero"]
MODEL_NAMES = {"skip": "instruction skip", "regflip": "register bit flip",
               "flagflip": "flag flip (N/Z/C/V)", "zero": "zeroing"}
REGION_ORDER = ["entry/erase", "key check", "CPA multiply", "decode", "decode check",
                "re-encryption multiply", "comparison", "mask", "selection", "duplicated output",
                "output check", "cleanup"]


def table(rows: list[list], header: list[str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def stacked(ax, labels, counts_by_label, title):
    bottoms = [0] * len(labels)
    for cls, colour in zip(CLASSES, COLOURS):
        vals = [counts_by_label[lab].get(cls, 0) for lab in labels]
        ax.bar(labels, vals, bottom=bottoms, color=colour, label=cls)
        bottoms = [b + v for b, v in zip(bottoms, vals)]
    ax.set_title(title)
    ax.set_ylabel("trials")
    ax.tick_params(axis="x", rotation=30)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hardened", required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--out", required=True, help="reports/security directory")
    ap.add_argument("--command", default="security/fault/run.sh")
    ap.add_argument("--notes", default="", help="markdown appended to the report (history of findings)")
    a = ap.parse_args()
    hard = json.load(open(a.hardened))
    ctrl = json.load(open(a.control))
    trials = [t for t in hard["trials"] if t["outcome"] != "not injected"]
    not_injected = len(hard["trials"]) - len(trials)
    total = Counter(t["outcome"] for t in trials)
    by_model: dict[str, Counter] = defaultdict(Counter)
    by_region: dict[str, Counter] = defaultdict(Counter)
    by_ct: dict[str, Counter] = defaultdict(Counter)
    checks = Counter()
    for t in trials:
        by_model[t["model"]][t["outcome"]] += 1
        by_region[t["region"]][t["outcome"]] += 1
        by_ct[t["ct"]][t["outcome"]] += 1
        if t["outcome"] == "detected+erased":
            checks[t["check"]] += 1
    counter_checks = {k: v for k, v in checks.items() if "loop completion" in k}
    counter_group = Counter(t["outcome"] for t in trials if t["group"] == "loop counter")
    failures = sum(total[c] for c in FAILING)
    ctrl_trials = [t for t in ctrl["trials"] if t["outcome"] != "not injected"]
    ctrl_total = Counter(t["outcome"] for t in ctrl_trials)
    ctrl_failures = sum(ctrl_total[c] for c in FAILING)
    # Strict control: single faults on the unhardened code must release forgeries, or the
    # campaign (its regions, its fault models, its classifier) could not see one.
    ok = failures == 0 and not_injected == 0 and sum(counter_checks.values()) > 0 \
        and ctrl_total["forgery released"] > 0
    os.makedirs(a.out, exist_ok=True)

    # Plots
    fig, ax = plt.subplots(figsize=(8, 4.5))
    labels = [MODEL_NAMES[m] for m in MODELS if m in by_model]
    stacked(ax, labels, {MODEL_NAMES[m]: by_model[m] for m in MODELS if m in by_model},
            f"Fault outcomes per model ({len(trials)} single-fault trials, M33, CCA2 decrypt Set 1)")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "fault-outcomes.png"), dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(10, 4.8))
    regs = [r for r in REGION_ORDER if r in by_region] + sorted(r for r in by_region if r not in REGION_ORDER)
    stacked(ax, regs, by_region, "Fault outcomes per code region")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "fault-regions.png"), dpi=110)
    plt.close(fig)

    pct = lambda n, d: f"{100.0 * n / d:.1f}%" if d else "-"  # noqa: E731
    md = []
    md.append("## Instruction-level fault injection on the Cortex-M33 ELF (CCA2 decryption)")
    md.append("")
    md.append(f"Command: `{a.command}` (campaign.py with run.sh's full-form arguments){' (short form)' if hard.get('short') else ''}. Image: "
              f"`{os.path.relpath(hard['elf'])}`; target: `{hard['target']}` called through "
              "`fault_entry_decrypt_set1` (the instance the firmware tests run). Emulator: Unicorn "
              "2.1.4 (security/emu/m33.py). Fault-free run: "
              f"{hard['golden_instructions']:,} instructions from the first to the last "
              "instruction of `cca::decrypt_reporting_output` (callees included; the public "
              "`cca::decrypt` is inlined into the entry point and adds only the caller-side "
              "output-address check after the return, which is not faulted).")
    md.append("")
    md.append("One fault per run: an instruction skip, a bit flip in a register the instruction reads, "
              "a flip of N, Z, C or V, or zeroing of the register an instruction wrote (groups: "
              "comparison accumulators, masks, loop counters = induction registers of the loop "
              "back-edges, other destinations), at every static instruction of the comparison, "
              "mask, selection, duplicated output, output check, decode, decode check, key check "
              "and erase code (first, last and a random execution), plus the loop control of the "
              "two multiplications. Valid ciphertexts and two tampered ones (a bit of c3: the "
              "candidate is a chosen forgery; a bit of the tag c4: the candidate is the message). "
              "References (message, implicit-rejection values, candidates) are computed in Python "
              "with hashlib/hmac, independently of the firmware.")
    md.append("")
    if hard.get("planned", 0) > len(hard["trials"]):
        md.append(f"The time bound stopped the campaign after {len(hard['trials']):,} of "
                  f"{hard['planned']:,} planned trials (the trials run are a random sample of the plan).")
        md.append("")
    md.append(f"**Result: {'PASS' if ok else 'FAIL'}** — {len(trials):,} trials; "
              f"{total['forgery released']} forgeries released, {total['silent corruption']} silent "
              f"corruptions, {total['error, not erased']} errors with unerased output; "
              f"{not_injected} planned faults not injected; loop-completion counters fired in "
              f"{sum(counter_checks.values())} trials; the unhardened control had "
              f"{ctrl_total['forgery released']} forgeries and {ctrl_total['silent corruption']} "
              f"silent corruptions in {len(ctrl_trials)} trials (forgeries there must be > 0; {ctrl_failures} failures in all).")
    md.append("")
    md.append("### Outcomes per fault model")
    md.append("")
    rows = [[MODEL_NAMES[m], sum(by_model[m].values())] + [by_model[m].get(c, 0) for c in CLASSES]
            for m in MODELS if m in by_model]
    rows.append(["**total**", len(trials)] + [total.get(c, 0) for c in CLASSES])
    md.append(table(rows, ["model", "trials"] + CLASSES))
    md.append("")
    md.append("![outcomes per model](fault-outcomes.png)")
    md.append("")
    md.append("### Outcomes per code region")
    md.append("")
    rows = [[r, sum(by_region[r].values())] + [by_region[r].get(c, 0) for c in CLASSES] for r in regs]
    md.append(table(rows, ["region", "trials"] + CLASSES))
    md.append("")
    md.append("![outcomes per region](fault-regions.png)")
    md.append("")
    md.append("### Per ciphertext")
    md.append("")
    rows = [[ct, sum(c.values())] + [c.get(k, 0) for k in CLASSES] for ct, c in sorted(by_ct.items())]
    md.append(table(rows, ["ciphertext", "trials"] + CLASSES))
    md.append("")
    md.append("### Which check detected the fault (detected+erased)")
    md.append("")
    md.append(table([[k or "(other error)", v] for k, v in checks.most_common()], ["check", "trials"]))
    md.append("")
    md.append(f"Loop-completion counters: {sum(counter_checks.values())} detections "
              f"({', '.join(f'{k}: {v}' for k, v in sorted(counter_checks.items()))}). "
              f"Loop-counter zeroing trials: {sum(counter_group.values())} "
              f"({', '.join(f'{k}: {v}' for k, v in counter_group.most_common())}).")
    md.append("")
    md.append("### Beside the paper (RBLWE paper, Table V)")
    md.append("")
    md.append(table([
        ["fault model", "debugger (GDB/J-Link) logical faults: zeroing, value substitution, "
         "12 skipped instructions x3", "emulated (Unicorn) instruction skip / register bit flip / "
         "flag flip / zeroing at every instruction of the listed regions"],
        ["trials", "2,678", f"{len(trials):,}"],
        ["authentication bypass / forgery released", "0", str(total["forgery released"])],
        ["silent corruption of a valid output", "6 (selector-store and loop-control skips)",
         str(total["silent corruption"])],
        ["errors with output not erased", "not reported", str(total["error, not erased"])],
        ["crash or hang", "0", str(total["crash/hang"])],
        ["safe (correct, detected+erased, implicit rejection)", "2,672",
         f"{total['correct'] + total['detected+erased'] + total['implicit rejection']:,}"],
    ], ["", "paper", "this campaign"]))
    md.append("")
    md.append("Crashes and hangs (stray stores or loads after a corrupted pointer, a corrupted "
              "return address, a loop that does not end within twice the fault-free length) "
              "release nothing through the API; they are counted, not failures.")
    md.append("")
    md.append("### Negative control: the same campaign without fault hardening")
    md.append("")
    md.append(f"`--config unhardened` runs `cca::decrypt::<Set1, ConstantTime, ..>` "
              f"(one comparison, one mask, one output store) through "
              f"`fault_entry_decrypt_set1_unhardened`: {len(ctrl_trials)} trials in the comparison, "
              "mask and selection code.")
    md.append("")
    md.append(table([[k, ctrl_total.get(k, 0)] for k in CLASSES], ["outcome", "trials"]))
    md.append("")
    if a.notes and os.path.exists(a.notes):
        md.append(open(a.notes).read().rstrip())
        md.append("")
    with open(os.path.join(a.out, "fault.md.tmp"), "w") as f:
        f.write("\n".join(md) + "\n")
    os.replace(os.path.join(a.out, "fault.md.tmp"), os.path.join(a.out, "fault.md"))
    print("\n".join(md[6:8]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
