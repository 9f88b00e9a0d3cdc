#!/usr/bin/env python3
"""Static constant-time audit of every firmware image (rules: engine.py; images, roots and
controls: images.py; reasons: reviews.py; pinned counts: expected/<image>.json).

For each image: walk the call graph from its roots, audit every function reached, and require
  - every root pattern to match a function of the ELF;
  - every finding to be covered by a review (rule + source location + reason), else FAIL;
  - the finding counts per function and rule, and the set of functions reached, to equal the
    pinned ones in expected/<image>.json (a change in either fails until re-reviewed);
  - every negative control to be flagged by exactly its rule, with the pinned count, and by
    no other rule.

Usage:
  audit.py [--report FILE] [--update] NAME=ELF [NAME=ELF ...]
  audit.py --self-test NAME=ELF      the pin check must fail on a perturbed pin file
Exit status 0 only if every image passes.
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import engine  # noqa: E402
import images  # noqa: E402
import reviews  # noqa: E402

EXPECTED = os.path.join(HERE, "expected")


def review_for(rule, func, where):
    for r in reviews.REVIEWS:
        subject = where[1] if r.get("line") else where[0]
        if rule in r["rules"] and re.search(r["where"], subject) and re.search(r.get("func", ""), func):
            return r
    return None


def audit_image(name, elf, funcs, starts):
    cfg = images.IMAGES[name]
    roots, missing, order, results = engine.walk(funcs, starts, cfg["roots"], images.STOP + cfg.get("stop", []))
    counts = {}
    unreviewed, known = [], []
    by_review = collections.Counter()
    for fn in order:
        findings, size = results[fn]
        c = collections.Counter(r for r, _, _ in findings)
        counts[fn] = {r: c[r] for r in engine.RULES if c[r]}
        for rule, insn, text in findings:
            rv = review_for(rule, fn, insn.where)
            if rv is None:
                unreviewed.append(f"{fn}: {text} [{insn.where[1]}]")
            else:
                by_review[(rv["id"], rule)] += 1
                if rv.get("known"):
                    known.append(f"{fn}: {text} [{insn.where[1]}]")
    controls = {}
    for cname, rule in cfg.get("controls", {}).items():
        copies = funcs.get(cname)
        if not copies:
            controls[cname] = (rule, None)
            continue
        f = [x for c in copies for x in engine.audit_copy(c, starts)[0]]
        cc = collections.Counter(r for r, _, _ in f)
        controls[cname] = (rule, {r: cc[r] for r in engine.RULES if cc[r]})
    return {"roots": roots, "missing": missing, "order": order, "results": results, "counts": counts,
            "unreviewed": unreviewed, "known": known, "by_review": by_review, "controls": controls}


def pinned_path(name):
    return os.path.join(EXPECTED, f"{name}.json")


def pin_document(res):
    return {"functions": {fn: res["counts"][fn] for fn in sorted(res["counts"])},
            "controls": {c: v[1] for c, v in sorted(res["controls"].items())}}


def compare_pins(res, pins):
    """Differences between this run and the pinned counts (empty = same)."""
    diffs = []
    have, want = res["counts"], pins.get("functions", {})
    for fn in sorted(set(have) | set(want)):
        if fn not in want:
            diffs.append(f"new function on the secret path: {fn} {have[fn]}")
        elif fn not in have:
            diffs.append(f"function no longer reached: {fn} (pinned {want[fn]})")
        elif have[fn] != want[fn]:
            diffs.append(f"{fn}: findings {have[fn]}, pinned {want[fn]}")
    for c, (rule, got) in sorted(res["controls"].items()):
        pinned = pins.get("controls", {}).get(c)
        if got is None:
            diffs.append(f"control {c} not found in the ELF")
        elif set(got) != {rule}:
            diffs.append(f"control {c}: flagged by {sorted(got) or 'nothing'}, must be exactly {rule}")
        elif got != pinned:
            diffs.append(f"control {c}: {got}, pinned {pinned}")
    return diffs


def check(name, elf, update):
    funcs, starts = engine.disassemble(elf)
    res = audit_image(name, elf, funcs, starts)
    if update:
        os.makedirs(EXPECTED, exist_ok=True)
        tmp = pinned_path(name) + ".tmp"
        with open(tmp, "w") as f:
            json.dump(pin_document(res), f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, pinned_path(name))
    try:
        with open(pinned_path(name)) as f:
            pins = json.load(f)
    except FileNotFoundError:
        pins = {}
    res["diffs"] = compare_pins(res, pins)
    res["ok"] = not res["missing"] and not res["unreviewed"] and not res["diffs"]
    return res


def print_result(name, elf, res):
    total = collections.Counter()
    for c in res["counts"].values():
        total.update(c)
    insns = sum(res["results"][f][1] for f in res["order"])
    print(f"== audit {name}: {elf}")
    print(f"   {len(res['order'])} functions reached from {len(res['roots'])} roots ({insns} instructions); "
          f"findings {dict(sorted(total.items())) or 'none'}; all reviewed: {not res['unreviewed']}")
    for m in res["missing"]:
        print(f"AUDIT FAIL {name}: root {m!r} matches no function (inlined or renamed): update images.py")
    for u in res["unreviewed"]:
        print(f"AUDIT FAIL {name}: unreviewed finding {u}")
    for d in res["diffs"]:
        print(f"AUDIT FAIL {name}: {d}")
    for k in res["known"]:
        print(f"AUDIT KNOWN {name}: {k}")
    caught = 0
    for c, (rule, got) in sorted(res["controls"].items()):
        okc = got is not None and set(got) == {rule}
        caught += okc
        print(f"AUDIT CONTROL {name}: {c} flagged by {got} (must be exactly {rule}): {'caught' if okc else 'NOT CAUGHT'}")
    print(f"AUDIT {'PASS' if res['ok'] else 'FAIL'} {name}: {len(res['order'])} functions, "
          f"{sum(total.values())} findings (all reviewed and pinned: {not res['unreviewed'] and not res['diffs']}), "
          f"{caught}/{len(res['controls'])} controls caught by exactly their rule")


def report(path, runs):
    lines = ["## Static binary audit (security/audit)", "",
             "Every firmware image's ELF is disassembled (`arm-none-eabi-objdump -d -l --inlines`, "
             "armv8.1-m.main) and the call graph from the image's roots (BFV keygen, encoder, "
             "symmetric/seeded/public-key encryption, decryption, samplers and keystream; RBLWE CPA, "
             "CCA2 and masked decryption) is audited with rules R1 (variable-latency instructions and "
             "helper calls), R2 (conditional/indirect/table control flow, IT-block pc writes), R3 "
             "(indexed loads, register+register addresses, MVE gathers), R4 (the same for stores, MVE "
             "scatters) and R5 (loop bounds and exits not controlled by a counter). Every finding "
             "needs a review (reason per rule and source location, `security/audit/reviews.py`); the "
             "counts per function and rule are pinned (`security/audit/expected/`), and each negative "
             "control must be flagged by exactly its rule. The rules and what they do not prove: "
             "`security/audit/engine.py`.", "",
             "| image | result | functions | instructions | R1 | R2 | R3 | R4 | R5 | unreviewed | pin changes | controls caught | known (open) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, elf, res in runs:
        total = collections.Counter()
        for c in res["counts"].values():
            total.update(c)
        insns = sum(res["results"][f][1] for f in res["order"])
        caught = sum(1 for (rule, got) in res["controls"].values() if got is not None and set(got) == {rule})
        lines.append(f"| {name} | {'PASS' if res['ok'] else 'FAIL'} | {len(res['order'])} | {insns} | "
                     + " | ".join(str(total[r]) for r in engine.RULES)
                     + f" | {len(res['unreviewed'])} | {len(res['diffs']) + len(res['missing'])} | "
                       f"{caught}/{len(res['controls'])} | {len(res['known'])} |")
    lines += ["", "### Reviewed findings per image (review id: rule count)", ""]
    ids = {r["id"]: r for r in reviews.REVIEWS}
    for name, elf, res in runs:
        parts = [f"{rid} {rule}×{n}" for (rid, rule), n in sorted(res["by_review"].items())]
        lines.append(f"- **{name}**: " + (", ".join(parts) if parts else "no findings"))
    lines += ["", "### Reviews (reasons)", ""]
    used = {rid for _, _, res in runs for (rid, _) in res["by_review"]}
    for rid in sorted(used):
        r = ids[rid]
        tag = " **(known finding, not accepted)**" if r.get("known") else ""
        lines.append(f"- `{rid}` ({', '.join(r['rules'])}; `{r['where']}`){tag}: {r['reason']}")
    lines += ["", "### Negative controls", ""]
    for name, elf, res in runs:
        for c, (rule, got) in sorted(res["controls"].items()):
            okc = got is not None and set(got) == {rule}
            lines.append(f"- {name}: `{c}` must be exactly {rule}: got {got} — {'caught' if okc else 'NOT CAUGHT'}")
    lines += ["", "### Functions audited per image", ""]
    for name, elf, res in runs:
        lines.append(f"<details><summary>{name}: {len(res['order'])} functions</summary>\n")
        for fn in sorted(res["order"]):
            c = res["counts"][fn]
            lines.append(f"- `{fn}` ({res['results'][fn][1]} instructions)" + (f": {c}" if c else ""))
        lines.append("\n</details>\n")
    tmp = path + ".tmp"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def self_test(name, elf):
    """The pin check must notice a changed count, a removed function and a control caught by
    another rule (a broken pin check could otherwise pass everything)."""
    funcs, starts = engine.disassemble(elf)
    res = audit_image(name, elf, funcs, starts)
    with open(pinned_path(name)) as f:
        pins = json.load(f)
    ok = not compare_pins(res, pins)
    fn = next(f for f in sorted(pins["functions"]) if pins["functions"][f])
    rule = sorted(pins["functions"][fn])[0]
    bumped = json.loads(json.dumps(pins))
    bumped["functions"][fn][rule] += 1
    dropped = json.loads(json.dumps(pins))
    del dropped["functions"][fn]
    other = dict(res)
    c0 = next(iter(sorted(res["controls"])))
    other["controls"] = dict(res["controls"])
    rule0, got0 = res["controls"][c0]
    other["controls"][c0] = (rule0, {("R2" if rule0 != "R2" else "R3"): 1, **got0})
    checks = [("pins of this build match", ok), ("a count changed by one fails", bool(compare_pins(res, bumped))),
              ("a function dropped from the pins fails", bool(compare_pins(res, dropped))),
              ("a control also flagged by another rule fails", bool(compare_pins(other, pins)))]
    for what, passed in checks:
        print(f"self-test {name}: {what}: {'PASS' if passed else 'FAIL'}")
    return all(p for _, p in checks)


def main(argv):
    args = list(argv)
    report_path, update, selftest = None, False, False
    if "--report" in args:
        k = args.index("--report")
        report_path = args[k + 1]
        del args[k:k + 2]
    if "--update" in args:
        args.remove("--update")
        update = True
    if "--self-test" in args:
        args.remove("--self-test")
        selftest = True
    if not args or any("=" not in a for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    pairs = [a.split("=", 1) for a in args]
    for name, _ in pairs:
        if name not in images.IMAGES:
            print(f"audit.py: unknown image {name!r} (images.py knows {sorted(images.IMAGES)})", file=sys.stderr)
            return 2
    if selftest:
        return 0 if all(self_test(n, e) for n, e in pairs) else 1
    runs = []
    for name, elf in pairs:
        res = check(name, elf, update)
        print_result(name, elf, res)
        runs.append((name, elf, res))
    if report_path:
        report(report_path, runs)
    failed = [n for n, _, r in runs if not r["ok"]]
    print(f"AUDIT RESULT {len(runs) - len(failed)} of {len(runs)} images passed" + (f" (failed: {', '.join(failed)})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
