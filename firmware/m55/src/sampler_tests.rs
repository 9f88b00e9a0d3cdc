//! The Gaussian sampler's CDT scan on target: the Helium kernel behind
//! `zeppelin::sampler::gaussian_from_words` equals the scalar twin `gaussian_from_word` word
//! for word (random words and every CDT boundary), and the ablation (scalar twin vs MVE, same
//! image) in instructions retired.

use crate::harness::{Harness, TestRng};
use crate::meter::median_instructions;
use crate::ring_tests::N;
use cortex_m_semihosting::hprintln;
use zeppelin::sampler::{gaussian_from_word, gaussian_from_words, CDT, GAUSSIAN_BLOCK};
use zeppelin_ring::mve::Mve;

/// Random blocks compared (after the boundary blocks).
const RANDOM_BLOCKS: usize = 4096;

fn block_matches(words: &[u32; GAUSSIAN_BLOCK]) -> bool {
    let mut out = [0i8; GAUSSIAN_BLOCK];
    gaussian_from_words(&Mve, words, &mut out);
    words
        .iter()
        .zip(out.iter())
        .all(|(&w, &o)| gaussian_from_word(w) == o)
}

pub fn run(h: &mut Harness) {
    let mut rng = TestRng::new(0x4344_5453);
    let mut ok = true;
    let mut compared = 0usize;
    // Every CDT boundary and its neighbour below, with the ignored top bit clear and set,
    // and the extremes.
    let mut edges = [0u32; 4 * 42 + 4];
    for (k, &c) in CDT.iter().enumerate() {
        edges[4 * k] = c;
        edges[4 * k + 1] = c.wrapping_sub(1);
        edges[4 * k + 2] = c | 0x8000_0000;
        edges[4 * k + 3] = c.wrapping_sub(1) | 0x8000_0000;
    }
    edges[4 * 42..].copy_from_slice(&[0, u32::MAX, 0x7fff_ffff, 0x8000_0000]);
    for chunk in edges.chunks(GAUSSIAN_BLOCK) {
        let mut words = [0u32; GAUSSIAN_BLOCK];
        words[..chunk.len()].copy_from_slice(chunk);
        ok &= block_matches(&words);
        compared += GAUSSIAN_BLOCK;
    }
    for _ in 0..RANDOM_BLOCKS {
        let mut words = [0u32; GAUSSIAN_BLOCK];
        for w in words.iter_mut() {
            *w = rng.next_u32();
        }
        ok &= block_matches(&words);
        compared += GAUSSIAN_BLOCK;
    }
    h.check(
        "gaussian CDT scan: mve = scalar twin (every CDT boundary, random words)",
        ok,
        format_args!("a sample differs from the scalar twin"),
    );
    hprintln!("INFO gaussian mve vs scalar twin: {} words", compared);
}

/// Scalar twin vs MVE on `N` random words (the samples of one polynomial, keystream
/// excluded), median of 11 runs each.
pub fn ablation(words: &mut [u32; N], out: &mut [i8; N]) {
    let mut rng = TestRng::new(0x4741_5553);
    for w in words.iter_mut() {
        *w = rng.next_u32();
    }
    let scalar = median_instructions(|| {
        for (o, &w) in out.iter_mut().zip(words.iter()) {
            *o = gaussian_from_word(w);
        }
    });
    let mve = median_instructions(|| {
        for (o, w) in out
            .as_chunks_mut::<GAUSSIAN_BLOCK>()
            .0
            .iter_mut()
            .zip(words.as_chunks::<GAUSSIAN_BLOCK>().0)
        {
            gaussian_from_words(&Mve, w, o);
        }
    });
    hprintln!(
        "TABLE | gaussian CDT scan n=4096 (keystream excluded) | scalar {} | mve {} | {:.2}x |",
        scalar,
        mve,
        scalar as f32 / mve as f32
    );
}
