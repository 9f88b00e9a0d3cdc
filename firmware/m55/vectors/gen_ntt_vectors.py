#!/usr/bin/env python3
"""Known-answer vectors for the negacyclic NTT, computed independently of the Rust code.

For each prime q and n = 4096 this writes, as little-endian u32:
  ntt_<q>_in.bin   the input coefficients a[i] (a fixed 64-bit LCG, reduced mod q),
  ntt_<q>_fwd.bin  the evaluations  a(psi^(2*br(j)+1)) mod q  for j = 0..n,
where psi is the smallest primitive 2n-th root of unity mod q and br the 12-bit reversal:
the evaluation map zeppelin-ring documents (SEAL's and OpenFHE's convention). Nothing here
uses zeppelin's code: plain Python integers, Horner evaluation at each point.

Run: python3 gen_ntt_vectors.py   (about a minute; the outputs are committed)
"""
import struct

N = 4096
LOG_N = 12
PRIMES = [134176769, 134111233, 134012929, 133963777, 268369921]


def smallest_psi(q, n):
    # psi has order exactly 2n  <=>  psi^n == -1.  Take the minimum over all such roots.
    for g in range(2, q):
        c = pow(g, (q - 1) // (2 * n), q)
        if pow(c, n, q) == q - 1:
            break
    return min(pow(c, k, q) for k in range(1, 2 * n, 2))


def br(j, bits):
    return int(format(j, "0%db" % bits)[::-1], 2)


def lcg_poly(q, seed):
    x = seed
    out = []
    for _ in range(N):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append((x >> 32) % q)
    return out


def main():
    for q in PRIMES:
        psi = smallest_psi(q, N)
        a = lcg_poly(q, q)
        fwd = []
        for j in range(N):
            x = pow(psi, 2 * br(j, LOG_N) + 1, q)
            acc = 0
            for c in reversed(a):
                acc = (acc * x + c) % q
            fwd.append(acc)
        with open("ntt_%d_in.bin" % q, "wb") as f:
            f.write(struct.pack("<%dI" % N, *a))
        with open("ntt_%d_fwd.bin" % q, "wb") as f:
            f.write(struct.pack("<%dI" % N, *fwd))
        print(q, "psi =", psi)


if __name__ == "__main__":
    main()
