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
    return {"rows": rows}


def write(tmp_path, value):
    path = tmp_path / "peer.json"
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def test_every_row_positive_passes(tmp_path):
    r = report()
    assert peer_bench.validate(write(tmp_path, r)) == r
    # Every (operation, peer) pair of the issues: 6 NTT rows, 5 client rows x 2 peers, expand
    # seed, and the three server rows against SEAL (issue 13).
    assert len(r["rows"]) == 6 + 5 * 2 + 1 + 3


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
