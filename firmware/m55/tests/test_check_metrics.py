"""Tests of firmware/m55/check_metrics.py, and of a real run's output when there is one.

    python3 -m unittest discover -s firmware/m55/tests      # synthetic cases
    M55_RUN_OUTPUT=/tmp/m55.txt python3 -m unittest discover -s firmware/m55/tests
                                                            # also checks that run's lines
(run.sh keeps its last output in target-m55/m55-run.txt, the default when the file exists.)
"""
import os
import pathlib
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import check_metrics  # noqa: E402

DEFAULT_RUN = HERE.parent.parent.parent / "target-m55" / "m55-run.txt"


def complete():
    lines = [f"METRIC {p} {o} {v} {1000 + i} {100 + i}"
             for i, (p, o, v) in enumerate(check_metrics.expected_metrics())]
    lines += [f"RAM {image} {200000 + i}" for i, image in enumerate(check_metrics.CLIENT_IMAGES)]
    return ["TABLE | something else | 12 |", "PASS a test"] + lines


class SyntheticOutput(unittest.TestCase):
    def test_complete_output_passes_and_reads_every_figure(self):
        problems, metrics, ram = check_metrics.check(complete())
        self.assertEqual(problems, [])
        self.assertEqual(len(metrics), len(check_metrics.expected_metrics()))
        self.assertEqual(metrics[("zeppelin4096", "encode_seeded_encrypt", "software")][1] - 100,
                         metrics[("zeppelin4096", "encode_seeded_encrypt", "software")][0] - 1000)
        self.assertEqual(ram["client_symmetric_zeppelin4096"], 200001)

    def test_missing_metric_is_named(self):
        lines = [l for l in complete() if l.split()[1:4] != ["zeppelin4096", "decrypt_decode", "excluded"]]
        problems, _, _ = check_metrics.check(lines)
        self.assertEqual(problems, ["missing METRIC zeppelin4096 decrypt_decode excluded"])

    def test_missing_ram_is_named(self):
        lines = [l for l in complete() if l != next(x for x in complete() if x.startswith("RAM client_public_seal8192"))]
        problems, _, _ = check_metrics.check(lines)
        self.assertEqual(problems, ["missing RAM client_public_seal8192"])

    def test_non_numeric_zero_and_short_lines_fail(self):
        for bad in ("METRIC seal4096 encode software 12x 888",
                    "METRIC seal4096 encode software -5 888",
                    "METRIC seal4096 encode software 0 888",
                    "METRIC seal4096 encode software 195093",
                    "RAM client_symmetric_seal4096 lots"):
            lines = complete() + [bad]
            problems, _, _ = check_metrics.check(lines)
            self.assertTrue(problems, bad)

    def test_keystream_variants(self):
        keys = set(check_metrics.expected_metrics())
        for preset in ("seal4096", "zeppelin4096", "seal8192"):
            for variant in ("software", "aes_software"):
                self.assertIn((preset, "encode_seeded_encrypt", variant), keys)
        self.assertIn(("zeppelin4096", "encode_seeded_encrypt", "table_public"), keys)
        self.assertNotIn(("seal8192", "encode_seeded_encrypt", "table_public"), keys)
        # The old name of the AES-only variant is gone: `software` is the ChaCha20 one.
        lines = [l for l in complete() if l.split()[1:4] != ["seal8192", "decrypt_decode", "aes_software"]]
        problems, _, _ = check_metrics.check(lines)
        self.assertEqual(problems, ["missing METRIC seal8192 decrypt_decode aes_software"])

    def test_duplicate_and_unexpected_lines_fail(self):
        problems, _, _ = check_metrics.check(complete() + [complete()[2]])
        self.assertTrue(any("duplicate" in p for p in problems))
        problems, _, _ = check_metrics.check(complete() + ["METRIC seal4096 teleport software 1 1"])
        self.assertEqual(problems, ["unexpected METRIC seal4096 teleport software (add it to check_metrics.py and the README)"])


class RealRun(unittest.TestCase):
    def test_run_output_is_complete(self):
        path = pathlib.Path(os.environ.get("M55_RUN_OUTPUT", DEFAULT_RUN))
        if not path.is_file():
            self.skipTest(f"no run output at {path} (run firmware/m55/run.sh first)")
        problems, metrics, ram = check_metrics.check(path.read_text(errors="replace").splitlines())
        self.assertEqual(problems, [])
        self.assertGreater(len(metrics), 0)
        self.assertEqual(len(ram), 6)


if __name__ == "__main__":
    unittest.main()
