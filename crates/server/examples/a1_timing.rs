#![allow(clippy::unwrap_used)]
use std::sync::Arc;
use std::time::Instant;
use zeppelin_seal::*;
use zeppelin_server::Evaluator;
fn med(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let rd = |n: &str| std::fs::read(format!("{dir}/{n}.seal")).unwrap();
    let ctx =
        Arc::new(SealContext::new(EncryptionParameters::load(&rd("params")).unwrap()).unwrap());
    let eval = Evaluator::new(ctx.clone()).unwrap();
    let relin = RelinKeys::load(&ctx, &rd("relin")).unwrap();
    let gk = GaloisKeys::load(&ctx, &rd("galois_main")).unwrap();
    let pr = eval.prepare_relin_keys(&relin).unwrap();
    let pg = eval.prepare_galois_keys(&gk).unwrap();
    let prod = Ciphertext::load(&ctx, &rd("top_mul")).unwrap();
    let a = Ciphertext::load(&ctx, &rd("a")).unwrap();
    let p = Plaintext::load(&ctx, &rd("p")).unwrap();
    if let Some(op) = std::env::args().nth(2) {
        let count: usize = std::env::args().nth(3).unwrap().parse().unwrap();
        let cts: Vec<_> = (0..64).map(|_| prod.clone()).collect();
        for i in 0..count {
            match op.as_str() {
                "relin" => {
                    eval.relinearize(&prod, &pr).unwrap();
                }
                "relin_raw" => {
                    eval.relinearize(&prod, &relin).unwrap();
                }
                "relin_stream" => {
                    eval.relinearize(&cts[i % 64], &pr).unwrap();
                }
                "rot1" => {
                    eval.rotate_rows(&a, 1, &pg).unwrap();
                }
                "rotcol" => {
                    eval.rotate_columns(&a, &pg).unwrap();
                }
                "mulp" => {
                    eval.multiply_plain(&a, &p).unwrap();
                }
                "none" => {}
                _ => panic!(),
            }
        }
        return;
    }
    let time = |f: &dyn Fn()| {
        for _ in 0..20 {
            f()
        }
        med((0..300)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e6
            })
            .collect())
    };
    println!(
        "relinearize prepared {:.1} us",
        time(&|| {
            eval.relinearize(&prod, &pr).unwrap();
        })
    );
    println!(
        "relinearize raw keys {:.1} us",
        time(&|| {
            eval.relinearize(&prod, &relin).unwrap();
        })
    );
    println!(
        "rotate_rows(1) prepared {:.1} us",
        time(&|| {
            eval.rotate_rows(&a, 1, &pg).unwrap();
        })
    );
    println!(
        "rotate_rows(7) prepared (NAF, 2 switches) {:.1} us",
        time(&|| {
            eval.rotate_rows(&a, 7, &pg).unwrap();
        })
    );
    println!(
        "rotate_columns prepared {:.1} us",
        time(&|| {
            eval.rotate_columns(&a, &pg).unwrap();
        })
    );
    println!(
        "multiply_plain {:.1} us",
        time(&|| {
            eval.multiply_plain(&a, &p).unwrap();
        })
    );
    println!(
        "add_plain {:.1} us",
        time(&|| {
            eval.add_plain(&a, &p).unwrap();
        })
    );
    let cts: Vec<_> = (0..64).map(|_| prod.clone()).collect();
    let t = Instant::now();
    for _ in 0..5 {
        eval.relinearize_many(&cts, &pr).unwrap();
    }
    println!(
        "relinearize_many 64 x5: {:.1} us/ct ({} threads)",
        t.elapsed().as_secs_f64() * 1e6 / 320.0,
        rayon::current_num_threads()
    );
}
