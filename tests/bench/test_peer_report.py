"""scripts/peer_bench.py's report check (what `--short` relies on in CI): a report with every
row and finite positive figures passes, and one missing row, a zero, a NaN or malformed JSON
each stop it. The timing itself runs in `bash scripts/peer_bench.sh --short`."""

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import peer_bench  # noqa: E402


def report():
    rows = []
    for i, (key, label, peer, goal) in enumerate(peer_bench.rows_wanted()):
        ours, theirs = 1.0 + i, 3.0 * (1.0 + i)
        rows.append({"key": key, "label": label, "peer": peer, "goal": goal,
                     "ours": {"median_us": ours}, "theirs": {"median_us": theirs},
                     "ratio": theirs / ours})
    return {"rows": rows, "engine": engine(per_ct=700.0, budget=400.0)}


def engine(per_ct, budget):
    return {"ring_dim": 4096, "towers": 12, "batch": 64, "backend": "avx512",
            "transforms_per_ct": {"inverse": 12, "forward": 132},
            "one_forward_us": budget / 144, "one_inverse_us": budget / 144, "budget_us": budget,
            "per_ct_us": per_ct, "ct_per_s_one_core": 1e6 / per_ct,
            "over_budget": per_ct / budget, "goal": peer_bench.ENGINE_GOAL,
            "met": per_ct / budget <= peer_bench.ENGINE_GOAL}


def write(tmp_path, value):
    path = tmp_path / "peer.json"
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def test_every_row_positive_passes(tmp_path):
    r = report()
    assert peer_bench.validate(write(tmp_path, r)) == r
    # Every (operation, peer) pair of the issues: 6 NTT rows, 5 client rows x 2 peers, expand
    # seed, the three server rows against SEAL (issue 13), and the aggregation rows (issue 30):
    # sum on one core and on all and dot against our path before the linear sums, and sum on
    # one core against SEAL.
    assert len(r["rows"]) == 6 + 5 * 2 + 1 + 3 + 3 + 1


def test_a_missing_engine_row_fails(tmp_path):
    r = report()
    del r["engine"]
    with pytest.raises(SystemExit, match="engine row is missing"):
        peer_bench.validate(write(tmp_path, r))
    r["engine"] = engine(per_ct=math.nan, budget=400.0)
    with pytest.raises(SystemExit, match="engine row has"):
        peer_bench.validate(write(tmp_path, r))


def test_the_engine_row_is_tabled_with_its_goal():
    lines = peer_bench.engine_lines({"engine": engine(per_ct=480.0, budget=400.0)})
    assert lines[2].endswith("| 480.0 | 1.20× | ≤ 1.25× | met |"), lines[2]
    lines = peer_bench.engine_lines({"engine": engine(per_ct=700.0, budget=400.0)})
    assert lines[2].endswith("| 700.0 | 1.75× | ≤ 1.25× | **not met** |"), lines[2]
    assert "12 inverse + 132 forward" in lines[2]


@pytest.mark.parametrize("which", ["first", "last"])
def test_a_missing_row_fails(tmp_path, which):
    r = report()
    del r["rows"][0 if which == "first" else -1]
    with pytest.raises(SystemExit, match="missing"):
        peer_bench.validate(write(tmp_path, r))


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, None, "1.0"])
def test_a_bad_figure_fails(tmp_path, bad):
    r = report()
    r["rows"][3]["theirs"]["median_us"] = bad
    with pytest.raises(SystemExit, match="has"):
        peer_bench.validate(write(tmp_path, r))


def test_malformed_json_fails(tmp_path):
    with pytest.raises(json.JSONDecodeError):
        peer_bench.validate(write(tmp_path, '{"rows": ['))


def test_floor_rows_are_tabled_with_their_goal():
    def row(ours, met):
        return {"n": 4096, "transform": "forward", "floor": {"median_us": 2.0}, "ours_us": ours,
                "ours_over_floor": ours / 2.0, "tfhe_ntt_over_floor": 1.8,
                "goal": peer_bench.FLOOR_GOAL, "met": met}
    lines = peer_bench.floor_lines({"ntt_arithmetic_floor": [row(2.4, True), row(3.0, False)]})
    assert lines[2].endswith("| 1.20× | 1.80× | ≤ 1.25× | met |"), lines[2]
    assert lines[3].endswith("| 1.50× | 1.80× | ≤ 1.25× | **not met** |"), lines[3]
    # A machine without AVX-512 runs no floor probe: no table.
    assert peer_bench.floor_lines({"ntt_arithmetic_floor": []}) == []
