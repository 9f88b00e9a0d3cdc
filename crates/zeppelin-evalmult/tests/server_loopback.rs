//! The stream protocol over loopback TCP (127.0.0.1 only): OpenFHE's vectors through RLMP
//! (digits from the host, as on the FPGA) and RLMD (digits in the server), odd tower counts,
//! and malformed frames answered with RLER while the session survives.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] fns unwrap and call expect on failure (clippy.toml exempts only #[test] fns)"
)]

use std::net::TcpListener;
use std::path::PathBuf;

use rand::{rngs::StdRng, Rng, SeedableRng};
use zeppelin_evalmult::frames::{self, codes};
use zeppelin_evalmult::server::{self, Client, RemoteError};
use zeppelin_evalmult::vectors::VectorSet;
use zeppelin_evalmult::{
    openfhe_primes, reference, tower_major_digits, Ciphertext, EvalMultError, FrameError, RelinKey,
    RnsContext,
};

fn vectors() -> VectorSet {
    let dir = std::env::var_os("ZEPPELIN_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        })
        .join("openfhe-bv-n4096-l4-b2");
    VectorSet::load(&dir).expect("shared OpenFHE vectors")
}

/// A server on an ephemeral loopback port (default limits).
fn start(ring_dim: usize) -> (std::net::SocketAddr, server::ServerHandle) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let handle = server::Server::new(listener, server::ServerConfig::new(ring_dim))
        .unwrap()
        .spawn()
        .unwrap();
    (handle.local_addr(), handle)
}

fn expect_error(client: &mut Client, code: u32) -> String {
    let frame = client.receive().unwrap();
    let (got, message) = frames::decode_error(&frame).expect("an RLER frame");
    assert_eq!(got, code, "{message}");
    message
}

#[test]
fn openfhe_vectors_over_tcp_and_malformed_frames() {
    let set = vectors();
    let expected = set.expected.clone().unwrap();
    let (addr, server) = start(4096);
    let mut client = Client::connect(addr).unwrap();

    // Digits decomposed in the server (RLMD).
    let results = client
        .eval_mult(&set.context, &set.key, &set.pairs, None)
        .unwrap();
    assert_eq!(results, expected);

    // Digits from the host (RLMP, the FPGA's split).
    let digits: Vec<_> = set
        .pairs
        .iter()
        .map(|(x, y)| {
            let r = reference::eval_mult(&set.context, &set.key, x, y).unwrap();
            tower_major_digits(&set.context, &r.digits).unwrap()
        })
        .collect();
    let results = client
        .eval_mult(&set.context, &set.key, &set.pairs, Some(&digits))
        .unwrap();
    assert_eq!(results, expected);

    // Unknown command.
    client.send(&[0x1234_5678, 0, 0]).unwrap();
    expect_error(&mut client, codes::MALFORMED);
    // A pair frame one word short.
    let mut frame =
        frames::encode_pair_frame(&set.context, &set.key, &set.pairs, Some(&digits), 1).unwrap();
    frame.pop();
    client.send(&frame).unwrap();
    let message = expect_error(&mut client, codes::MALFORMED);
    assert!(message.contains("words"), "{message}");
    // An unreduced residue inside an otherwise valid frame.
    let mut frame = frames::encode_pair_frame(&set.context, &set.key, &set.pairs, None, 0).unwrap();
    frame[100] = frames::word(set.context.moduli()[0].value(), 0);
    client.send(&frame).unwrap();
    let message = expect_error(&mut client, codes::MALFORMED);
    assert!(message.contains("not below"), "{message}");
    // A profile with a wrong Barrett constant (the FPGA would have computed garbage).
    let mut profile = frames::encode_profile(&set.context.moduli_values()).unwrap();
    profile[3] += 1;
    client.send(&profile).unwrap();
    let message = expect_error(&mut client, codes::MALFORMED);
    assert!(message.contains("Barrett"), "{message}");
    // A profile whose prime is not NTT-friendly for n = 4096 (1_000_000_007 - 1 = 2·500000003).
    client
        .send(&frames::encode_profile(&[1_000_000_007, 1_061_093_377]).unwrap())
        .unwrap();
    expect_error(&mut client, codes::PARAMETERS);
    // The same pair twice in one session.
    let frame =
        frames::encode_pair_frame(&set.context, &set.key, &set.pairs, Some(&digits), 0).unwrap();
    client.send(&frame).unwrap();
    let first = client.receive().unwrap();
    assert_eq!(frames::lo(first[0]), frames::CMD_RLRP);
    client.send(&frame).unwrap();
    expect_error(&mut client, codes::SEQUENCE);
    // Finish that session: pair 1, then the end-of-session marker.
    client
        .send(
            &frames::encode_pair_frame(&set.context, &set.key, &set.pairs, Some(&digits), 1)
                .unwrap(),
        )
        .unwrap();
    let second = client.receive().unwrap();
    let end = client.receive().unwrap();
    assert_eq!(frames::lo(end[0]), frames::CMD_RLEN);
    assert_eq!(
        frames::decode_results(&set.context, 2, &[first, second]).unwrap(),
        expected
    );

    // The session survived everything above: a full run still reproduces OpenFHE.
    let results = client
        .eval_mult(&set.context, &set.key, &set.pairs, None)
        .unwrap();
    assert_eq!(results, expected);
    drop(client);

    // A length prefix beyond the limit cannot be skipped: RLER, then the server closes.
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut stream, &(frames::MAX_FRAME_WORDS + 1).to_le_bytes()).unwrap();
    let frames::Incoming::Frame(reply) = frames::read_frame(&mut stream).unwrap() else {
        panic!("expected an RLER frame");
    };
    assert_eq!(frames::decode_error(&reply).unwrap().0, codes::FATAL);
    assert!(matches!(
        frames::read_frame(&mut stream).unwrap(),
        frames::Incoming::Closed
    ));
    server.shutdown().unwrap();
}

#[test]
fn odd_tower_count_over_tcp_matches_reference() {
    let n = 1024;
    let ctx = RnsContext::new(n, &openfhe_primes(30, n, 257, 3).unwrap()).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let mut poly = || -> Vec<u32> {
        (0..3 * n)
            .map(|j| rng.gen_range(0..ctx.moduli()[j / n].value()))
            .collect()
    };
    let key = RelinKey {
        ring_dim: n,
        moduli: ctx.moduli_values(),
        a: (0..3).map(|_| poly()).collect(),
        b: (0..3).map(|_| poly()).collect(),
    };
    let pairs: Vec<_> = (0..5)
        .map(|_| {
            (
                Ciphertext {
                    c0: poly(),
                    c1: poly(),
                },
                Ciphertext {
                    c0: poly(),
                    c1: poly(),
                },
            )
        })
        .collect();
    let (addr, server) = start(n);
    let mut client = Client::connect(addr).unwrap();
    let remote = client.eval_mult(&ctx, &key, &pairs, None).unwrap();
    for ((x, y), got) in pairs.iter().zip(&remote) {
        assert_eq!(*got, reference::eval_mult(&ctx, &key, x, y).unwrap().relin);
    }
    drop(client);
    server.shutdown().unwrap();
}

#[test]
fn frame_sizes_match_the_fpga_readme() {
    // README: at batch 64 the coefficient-major frame costs 16B + 24 = 1048 words per
    // coefficient per pair (12 digits).
    let header = frames::PairHeader {
        with_digits: true,
        ciphertexts: 64,
        digits: 12,
        pair_index: 0,
        pair_count: 6,
    };
    assert_eq!(header.words_per_coefficient(), 1048);
    assert_eq!(frames::CMD_RLPT, u32::from_be_bytes(*b"RLPT"));
    assert_eq!(frames::CMD_RLMP, u32::from_be_bytes(*b"RLMP"));
}

#[test]
fn session_errors_without_a_network() {
    let mut session = server::Session::new(1024);
    // Unknown command, then a pair frame before any profile: both answered, nothing kept.
    let reply = session.handle(&[0x1234_5678]);
    assert_eq!(
        frames::decode_error(&reply[0]).unwrap(),
        (
            codes::MALFORMED,
            "frame: unknown command word 0x0000000012345678".to_owned()
        )
    );
    let reply = session.handle(&[u64::from(frames::CMD_RLMP), 0, 0]);
    assert_eq!(
        frames::decode_error(&reply[0]).unwrap(),
        (
            codes::SEQUENCE,
            "frame: pair frame before any RLPT profile".to_owned()
        )
    );
    let reply = session.handle(&[]);
    assert_eq!(frames::decode_error(&reply[0]).unwrap().0, codes::MALFORMED);
    // An RLPT with a nonzero upper half in word 0, and one cut short.
    let reply = session.handle(&[u64::from(frames::CMD_RLPT) | 1 << 32, 0]);
    assert_eq!(frames::decode_error(&reply[0]).unwrap().0, codes::MALFORMED);
    let reply = session.handle(&[u64::from(frames::CMD_RLPT)]);
    let (code, message) = frames::decode_error(&reply[0]).unwrap();
    assert_eq!(code, codes::MALFORMED);
    assert!(message.contains("RLPT frame of 1 words"), "{message}");
}

#[test]
fn client_reports_server_errors_as_typed_frame_errors() {
    let set = vectors();
    // A server for n = 1024: the moduli of the n = 4096 vectors are valid for it too, so the
    // profile is accepted and the pair frames are refused for their length.
    let (addr, server) = start(1024);
    let mut client = Client::connect(addr).unwrap();
    let err = client
        .eval_mult(&set.context, &set.key, &set.pairs, None)
        .unwrap_err();
    assert!(
        matches!(
            &err,
            EvalMultError::Frame(FrameError::Remote(RemoteError { code, message }))
                if *code == codes::MALFORMED && message.contains("pair frame must have")
        ),
        "{err}"
    );
    drop(client);
    server.shutdown().unwrap();

    // Results that do not fit the session.
    let ctx = &set.context;
    assert!(matches!(
        frames::decode_results(ctx, 2, &[]),
        Err(EvalMultError::Frame(FrameError::ResultCount {
            frames: 0,
            pairs: 2
        }))
    ));
    let mut bad = frames::encode_end(2, 2);
    bad.resize(2 + 2 * 4096 * 2, 0);
    assert!(matches!(
        frames::decode_results(ctx, 2, &[bad.clone(), bad]),
        Err(EvalMultError::Frame(FrameError::NotResult { .. }))
    ));
    assert!(matches!(
        frames::encode_profile(&[1 << 27]),
        Err(EvalMultError::Frame(FrameError::ModulusTooSmall {
            tower: 0,
            modulus: 134_217_728
        }))
    ));
}
