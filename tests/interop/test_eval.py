"""`zeppelin eval` against SEAL's own Evaluator (seal-python 4.4.0).

For every operation and each SEAL preset: the same input files (device ciphertexts encrypted
and adapted here, one of them zstd-compressed) and the same keys (`zeppelin keys`) go through
`zeppelin eval` and through SEAL's Evaluator; the output file must be byte for byte SEAL's
result (`to_string()`, compr_mode none), and it must decrypt in SEAL to the expected slots.
Then the refusals: each exits non-zero with one `zeppelin: error:` line and writes nothing.
"""

import pytest
import seal

from conftest import SEAL_PRESETS, Keys, run

# Galois keys for these row steps only (0 = the column swap): direct keys for every rotation
# tested, and a step (3) without a key, which SEAL and `eval` must both refuse.
STEPS = [1, -1, 5, 0]


def rotate_rows(values, steps):
    half = len(values) // 2
    rows = [values[:half], values[half:]]
    return [r[(i + steps) % half] for r in rows for i in range(half)]


def rotate_columns(values):
    half = len(values) // 2
    return values[half:] + values[:half]


class EvalSetup:
    def __init__(self, keys):
        self.keys = keys
        run("keys", "--dir", keys.dir, "--relin", "--galois", "--steps",
            ",".join(str(s) for s in STEPS))
        self.relin = seal.RelinKeys()
        self.relin.load(keys.ctx, str(keys.path("relin.seal")))
        self.galois = seal.GaloisKeys()
        self.galois.load(keys.ctx, str(keys.path("galois.seal")))
        self.x = keys.random_values(("eval-x", keys.preset))
        self.y = keys.random_values(("eval-y", keys.preset))
        self.x_path = keys.adapt(keys.encrypt_here(self.x, "seeded", "ex"), "ex")
        y_device = keys.encrypt_here(self.y, "public", "ey")
        self.y_path = keys.adapt(y_device, "ey")
        # The same ciphertext zstd-compressed (which seal-python 4.4.0 does not read): eval
        # reads any compression.
        self.y_zstd = keys.adapt(y_device, "ey_zstd", compress="zstd")
        self.cx = keys.load_ct(self.x_path)
        self.cy = keys.load_ct(self.y_path)

    def eval(self, tmp_path, op, *inputs, steps=None, ok=True):
        out = tmp_path / f"{op}.seal"
        args = ["eval", "--dir", self.keys.dir, "--op", op, "--in", inputs[0]]
        if len(inputs) > 1:
            args += ["--in2", inputs[1]]
        if steps is not None:
            args += ["--steps", steps]
        run(*args, "--out", out, ok=ok)
        return out


@pytest.fixture(scope="module", params=SEAL_PRESETS)
def setup(request, tmp_path_factory):
    return EvalSetup(Keys(tmp_path_factory.mktemp("eval-" + request.param), request.param))


def cases(s):
    """(op, input files, --steps, SEAL's result, expected slots) for every operation."""
    ev, T = s.keys.evaluator, s.keys.t
    x, y = s.x, s.y
    product = ev.multiply(s.cx, s.cy)
    product_path = s.keys.save_ct(product, "product.seal")
    return [
        ("add", [s.x_path, s.y_zstd], None, ev.add(s.cx, s.cy),
         [(a + b) % T for a, b in zip(x, y)]),
        ("sub", [s.x_path, s.y_path], None, ev.sub(s.cx, s.cy),
         [(a - b) % T for a, b in zip(x, y)]),
        ("mul", [s.x_path, s.y_zstd], None, product, [(a * b) % T for a, b in zip(x, y)]),
        ("relin", [product_path], None, ev.relinearize(product, s.relin),
         [(a * b) % T for a, b in zip(x, y)]),
        ("rotate-rows", [s.x_path], 1, ev.rotate_rows(s.cx, 1, s.galois), rotate_rows(x, 1)),
        ("rotate-rows", [s.x_path], -1, ev.rotate_rows(s.cx, -1, s.galois),
         rotate_rows(x, -1)),
        ("rotate-rows", [s.x_path], 5, ev.rotate_rows(s.cx, 5, s.galois), rotate_rows(x, 5)),
        ("rotate-columns", [s.x_path], None, ev.rotate_columns(s.cx, s.galois),
         rotate_columns(x)),
        ("mod-switch", [s.y_path], None, ev.mod_switch_to_next(s.cy), y),
    ]


# Where an uncompressed SEAL Ciphertext names the SEAL version that wrote it (the minor version
# byte of its SEALHeader and of its data DynArray's): 4.1 here, 4.4 from seal-python 4.4.0.
VERSION_MINOR_AT = (4, 16 + 73 + 4)


def assert_seals_bytes(path, want_ct, what):
    """`path` holds exactly SEAL's ciphertext `want_ct`, byte for byte but for the minor
    version SEAL writes into the headers."""
    ours = path.read_bytes()
    theirs = want_ct.to_string()
    assert len(ours) == len(theirs), (what, len(ours), len(theirs))
    differing = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    assert all(i in VERSION_MINOR_AT for i in differing), (
        f"{what}: {len(differing)} of {len(ours)} bytes differ from SEAL, first at {differing[:5]}"
    )
    assert all(ours[i] == 1 for i in VERSION_MINOR_AT), what


CASE_IDS = ["add", "sub", "mul", "relin", "rotate-rows-1", "rotate-rows--1", "rotate-rows-5",
            "rotate-columns", "mod-switch"]


@pytest.mark.parametrize("index", range(len(CASE_IDS)), ids=CASE_IDS)
def test_eval_output_is_byte_for_byte_seals_and_decrypts(setup, tmp_path, index):
    op, inputs, steps, want_ct, want = cases(setup)[index]
    out = setup.eval(tmp_path, op, *inputs, steps=steps)
    assert_seals_bytes(out, want_ct, f"{op} {steps}")
    ct = setup.keys.load_ct(out)
    assert setup.keys.seal_decrypt(ct) == want, op


def test_eval_mod_switch_down_to_the_last_level_then_refuses(setup, tmp_path):
    keys, path = setup.keys, setup.x_path
    ct = setup.cx
    for level in range(keys.seal_primes, 1, -1):
        out = tmp_path / f"level{level - 1}.seal"
        run("eval", "--dir", keys.dir, "--op", "mod-switch", "--in", path, "--out", out)
        ct = keys.evaluator.mod_switch_to_next(ct)
        assert_seals_bytes(out, ct, f"mod-switch to {level - 1} primes")
        assert keys.seal_decrypt(keys.load_ct(out)) == setup.x
        path = out
    # At the last level there is nothing to switch to.
    last = tmp_path / "below_last.seal"
    run("eval", "--dir", keys.dir, "--op", "mod-switch", "--in", path, "--out", last, ok=False)
    assert not last.exists()


def test_eval_refusals(setup, tmp_path):
    keys, x, y = setup.keys, setup.x_path, setup.y_path
    out = tmp_path / "out.seal"

    def refused(*args, says):
        proc = run("eval", "--dir", keys.dir, *args, "--out", out, ok=False)
        assert says in proc.stderr, (args, proc.stderr)
        assert not out.exists()

    refused("--op", "add", "--in", x, says="--in2")
    refused("--op", "mul", "--in", x, says="--in2")
    refused("--op", "relin", "--in", x, "--in2", y, says="drop --in2")
    refused("--op", "rotate-rows", "--in", x, says="--steps")
    refused("--op", "add", "--in", x, "--in2", y, "--steps", "1", says="--steps")
    # Operands at different levels.
    lower = tmp_path / "lower.seal"
    run("eval", "--dir", keys.dir, "--op", "mod-switch", "--in", y, "--out", lower)
    refused("--op", "add", "--in", x, "--in2", lower, says="level")
    # A rotation without its Galois key (keys for steps 1, -1, 5 and the column swap only).
    refused("--op", "rotate-rows", "--in", x, "--steps", "3", says="alois")
    # Not a ciphertext.
    refused("--op", "mod-switch", "--in", keys.path("relin.seal"), says="relin.seal")


def test_eval_needs_the_key_files(setup, tmp_path, copy_keys):
    keys = copy_keys(setup.keys)
    keys.path("relin.seal").unlink()
    keys.path("galois.seal").unlink()
    product = setup.keys.save_ct(setup.keys.evaluator.multiply(setup.cx, setup.cx), "sq.seal")
    for args in (["--op", "relin", "--in", product],
                 ["--op", "rotate-columns", "--in", setup.x_path]):
        proc = run("eval", "--dir", keys.dir, *args, "--out", tmp_path / "o.seal", ok=False)
        assert "zeppelin keys" in proc.stderr, proc.stderr


def test_the_byte_comparison_tells_results_apart(setup, tmp_path):
    # The comparison above is not blind: `add`'s output is not SEAL's `sub`, nor is a rotation
    # by 1 SEAL's rotation by -1.
    ev = setup.keys.evaluator
    added = setup.eval(tmp_path, "add", setup.x_path, setup.y_path)
    with pytest.raises(AssertionError):
        assert_seals_bytes(added, ev.sub(setup.cx, setup.cy), "add against sub")
    rotated = setup.eval(tmp_path, "rotate-rows", setup.x_path, steps=1)
    with pytest.raises(AssertionError):
        assert_seals_bytes(rotated, ev.rotate_rows(setup.cx, -1, setup.galois), "1 against -1")
