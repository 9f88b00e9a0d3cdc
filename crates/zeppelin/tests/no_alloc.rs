//! No client operation allocates: a counting global allocator (counting only on the thread
//! and in the window that asks for it) around every operation of the device client —
//! secret and public key generation, encoding, seeded / symmetric / public-key encryption,
//! decryption of both forms, decoding, seed expansion, and the wire and key byte forms
//! written and read — after one warm-up round, on every backend this CPU has. Its own test
//! binary, so that no other test's allocations are counted.
#![expect(clippy::unwrap_used, reason = "test code: a failure should panic")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use zeppelin::{
    encoder, wire, Bfv, Ciphertext, EncryptionSeeds, Params, Plaintext, PublicKey, PublicSeed,
    Seal4096, SecretKey, SecretSeed, SeededCiphertext, Workspace,
};
use zeppelin_ring::ClientKernels;

/// The system allocator, counting the allocations (and reallocations) made on a thread
/// while that thread's window is open.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    // `try_with`: no panic inside the allocator while a thread's locals are torn down.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is forwarded to `System` unchanged; the counting touches only
// constant-initialised thread-locals (which do not allocate).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How many allocations `f` made on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    COUNT.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    COUNT.with(Cell::get)
}

/// Everything a client round works on, allocated up front.
struct State<P: Params, B: ClientKernels> {
    sk: Box<SecretKey<P>>,
    sk_read: Box<SecretKey<P>>,
    pk: Box<PublicKey<P>>,
    pk_read: Box<PublicKey<P>>,
    ws: Box<Workspace<P, B>>,
    plain: Box<Plaintext<P>>,
    seeded: Box<SeededCiphertext<P>>,
    seeded_read: Box<SeededCiphertext<P>>,
    full: Box<Ciphertext<P>>,
    full_read: Box<Ciphertext<P>>,
    slots: Vec<u32>,
    decoded: Vec<u32>,
    bytes: Vec<u8>,
}

impl<P: Params, B: ClientKernels> State<P, B> {
    fn new(backend: B) -> Self {
        Self {
            sk: Box::new(SecretKey::zeroed()),
            sk_read: Box::new(SecretKey::zeroed()),
            pk: Box::new(PublicKey::zeroed()),
            pk_read: Box::new(PublicKey::zeroed()),
            ws: Box::new(Workspace::with_backend(backend)),
            plain: Box::new(Plaintext::zeroed()),
            seeded: Box::new(SeededCiphertext::zeroed()),
            seeded_read: Box::new(SeededCiphertext::zeroed()),
            full: Box::new(Ciphertext::zeroed()),
            full_read: Box::new(Ciphertext::zeroed()),
            slots: (0..P::N as u32).map(|i| i * 7 % P::T).collect(),
            decoded: vec![0; P::N],
            bytes: vec![0; 1 << 22],
        }
    }

    /// One round of every client operation (`round` varies the seeds); checks the results
    /// so that a round cannot skip its work.
    fn round(&mut self, round: u8) {
        let secret = SecretSeed::from_bytes([round; 32]);
        let seeds = EncryptionSeeds {
            a: PublicSeed([round ^ 0x55; 32]),
            e: SecretSeed::from_bytes([round ^ 0xAA; 32]),
        };
        Bfv::<P>::generate_secret_key_with(&secret, &mut self.sk).unwrap();
        Bfv::<P>::generate_public_key_with(
            &self.sk,
            &seeds.a,
            &seeds.e,
            &mut self.pk,
            &mut self.ws,
        )
        .unwrap();
        encoder::encode(&self.slots, &mut self.plain).unwrap();

        Bfv::<P>::encrypt_seeded_with(
            &self.sk,
            &self.plain,
            &seeds,
            P::K,
            &mut self.seeded,
            &mut self.ws,
        )
        .unwrap();
        let len = wire::write_seeded(&self.seeded, &mut self.bytes).unwrap();
        wire::read_seeded(&self.bytes[..len], &mut self.seeded_read).unwrap();
        Bfv::<P>::decrypt_seeded(&self.sk, &self.seeded_read, &mut self.plain, &mut self.ws)
            .unwrap();
        encoder::decode(&self.plain, &mut self.decoded).unwrap();
        assert_eq!(self.decoded, self.slots);
        Bfv::<P>::expand_ct1(&self.seeded_read, &mut self.full).unwrap();

        encoder::encode(&self.slots, &mut self.plain).unwrap();
        Bfv::<P>::encrypt_symmetric_with(
            &self.sk,
            &self.plain,
            &seeds,
            P::K,
            &mut self.full,
            &mut self.ws,
        )
        .unwrap();
        Bfv::<P>::encrypt_public_with(
            &self.pk,
            &self.plain,
            &seeds.e,
            P::K,
            &mut self.full,
            &mut self.ws,
        )
        .unwrap();
        let len = wire::write_full(&self.full, &mut self.bytes).unwrap();
        wire::read_full(&self.bytes[..len], &mut self.full_read).unwrap();
        Bfv::<P>::decrypt(&self.sk, &self.full_read, &mut self.plain, &mut self.ws).unwrap();
        encoder::decode(&self.plain, &mut self.decoded).unwrap();
        assert_eq!(self.decoded, self.slots);

        let len = self.sk.write_bytes(&mut self.bytes).unwrap();
        self.sk_read.read_bytes(&self.bytes[..len]).unwrap();
        let len = self.pk.write_bytes(&mut self.bytes).unwrap();
        self.pk_read.read_bytes(&self.bytes[..len]).unwrap();
        assert_eq!(self.pk_read.p0()[..], self.pk.p0()[..]);
    }
}

fn check_backend<B: ClientKernels>(backend: B) {
    let mut state = State::<Seal4096, B>::new(backend);
    // Warm-up: tables built on first use, if any, are built here.
    state.round(1);
    for round in 2..4 {
        let count = allocations(|| state.round(round));
        assert_eq!(
            count,
            0,
            "{}: {count} allocations in round {round}",
            backend.name()
        );
    }
}

#[test]
fn client_operations_do_not_allocate() {
    // The counter itself counts: a window around a `Vec` sees its allocation.
    assert_eq!(allocations(|| drop(std::hint::black_box(vec![1u8; 10]))), 1);
    check_backend(zeppelin_ring::Portable);
    check_backend(zeppelin_ring::default_backend());
    #[cfg(target_arch = "x86_64")]
    for name in ["avx2", "avx512"] {
        match zeppelin_ring::x86::Auto::from_name(name) {
            Ok(backend) => check_backend(backend),
            Err(_) => eprintln!("SKIP {name}: this CPU does not have the backend"),
        }
    }
}
