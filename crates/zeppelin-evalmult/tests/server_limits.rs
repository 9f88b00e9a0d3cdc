//! The server's limits over loopback TCP (127.0.0.1 only), each against a hostile client
//! of its kind: bad configuration, the connection cap, idle and slow-loris clients, frames
//! over the memory caps or longer than the profile allows, junk, unfinished sessions and
//! shutdown with work in flight. Honest sessions are checked against OpenFHE's vectors.
//! Every client socket has a read timeout, so a server that does not enforce a limit fails
//! the test instead of hanging it.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns unwrap and call expect on failure (clippy.toml exempts only #[test] fns)"
)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use zeppelin_evalmult::frames::{self, codes, Incoming};
use zeppelin_evalmult::server::{Client, Server, ServerConfig, ServerHandle, Session};
use zeppelin_evalmult::vectors::VectorSet;
use zeppelin_evalmult::{ConfigError, EvalMultError, FrameError, ServerError};

/// Every client read gives up after this: a limit not enforced fails instead of hanging.
const CLIENT_PATIENCE: Duration = Duration::from_secs(10);

fn vectors() -> VectorSet {
    let dir = std::env::var_os("ZEPPELIN_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        })
        .join("openfhe-bv-n4096-l4-b2");
    VectorSet::load(&dir).expect("shared OpenFHE vectors")
}

fn quick_config() -> ServerConfig {
    let mut config = ServerConfig::new(4096);
    config.idle_timeout = Duration::from_secs(5);
    config.read_timeout = Duration::from_secs(2);
    config.session_timeout = Duration::from_secs(5);
    config
}

fn start(config: ServerConfig) -> ServerHandle {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    Server::new(listener, config).unwrap().spawn().unwrap()
}

fn raw(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(CLIENT_PATIENCE)).unwrap();
    stream
}

fn send(stream: &mut TcpStream, words: &[u64]) {
    frames::write_frame(stream, words).unwrap();
}

/// The next frame, which must be RLER with `code`; returns its message.
fn expect_rler(stream: &mut TcpStream, code: u32) -> String {
    match frames::read_frame(stream).unwrap() {
        Incoming::Frame(frame) => {
            let (got, message) = frames::decode_error(&frame).expect("an RLER frame");
            assert_eq!(got, code, "{message}");
            message
        }
        other => panic!("expected RLER {code}, got {other:?}"),
    }
}

/// The server closed the stream (EOF or reset), not merely stopped answering.
fn expect_closed(stream: &mut TcpStream) {
    let mut byte = [0u8; 1];
    match stream.read(&mut byte) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("expected the server to close, got {other:?}"),
    }
}

fn honest_session(addr: SocketAddr, set: &VectorSet) {
    let mut client = Client::connect(addr).unwrap();
    client.set_timeout(Some(CLIENT_PATIENCE)).unwrap();
    let got = client
        .eval_mult(&set.context, &set.key, &set.pairs, None)
        .unwrap();
    assert_eq!(&got, set.expected.as_ref().unwrap());
}

#[test]
fn configuration_is_validated_before_listening() {
    // Regression: `evalmult serve --ring-dim 3` used to start.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let err = Server::new(listener, ServerConfig::new(3))
        .err()
        .expect("ring dimension 3 refused");
    assert!(
        matches!(
            err,
            ServerError::Config(ConfigError::RingDimension { ring_dim: 3, .. })
        ),
        "{err}"
    );
    for bad in [0, 8, 4095, 1 << 18] {
        assert!(matches!(
            ServerConfig::new(bad).validate(),
            Err(ConfigError::RingDimension { .. })
        ));
    }
    let mut config = ServerConfig::new(4096);
    config.max_connections = 0;
    assert_eq!(
        config.validate(),
        Err(ConfigError::Zero {
            what: "max connections"
        })
    );
    let mut config = ServerConfig::new(4096);
    config.session_memory = config.total_memory + 1;
    assert!(matches!(
        config.validate(),
        Err(ConfigError::SessionAboveTotal { .. })
    ));
    let mut config = ServerConfig::new(4096);
    config.session_memory = 1024;
    assert!(matches!(
        config.validate(),
        Err(ConfigError::SessionTooSmall { .. })
    ));
    assert_eq!(ServerConfig::new(4096).validate(), Ok(()));
}

#[test]
fn connections_beyond_the_cap_are_refused_with_one_frame() {
    let set = vectors();
    let mut config = quick_config();
    config.max_connections = 2;
    let server = start(config);
    let addr = server.local_addr();
    let first = raw(addr);
    let second = raw(addr);
    // Give the accept loop time to admit both before the third arrives.
    while server.stats().accepted < 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut third = raw(addr);
    let message = expect_rler(&mut third, codes::BUSY);
    assert!(message.contains("2 connections"), "{message}");
    expect_closed(&mut third);
    // A freed place serves an honest client.
    drop(first);
    let deadline = Instant::now() + CLIENT_PATIENCE;
    loop {
        let mut client = Client::connect(addr).unwrap();
        client.set_timeout(Some(CLIENT_PATIENCE)).unwrap();
        match client.eval_mult(&set.context, &set.key, &set.pairs, None) {
            Ok(got) => {
                assert_eq!(&got, set.expected.as_ref().unwrap());
                break;
            }
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("no place freed: {e}"),
        }
    }
    drop(second);
    let stats = server.shutdown().unwrap();
    assert!(stats.refused >= 1, "{stats}");
}

#[test]
fn idle_and_slow_loris_clients_are_dropped() {
    let mut config = quick_config();
    config.idle_timeout = Duration::from_millis(300);
    config.read_timeout = Duration::from_millis(300);
    let server = start(config);
    let addr = server.local_addr();

    // Idle: RLER TIMEOUT, then closed.
    let started = Instant::now();
    let mut idle = raw(addr);
    let message = expect_rler(&mut idle, codes::TIMEOUT);
    assert!(message.contains("idle"), "{message}");
    expect_closed(&mut idle);
    assert!(started.elapsed() < Duration::from_secs(3));

    // Slow loris: a length prefix one byte every 100 ms (and it would go on forever).
    let started = Instant::now();
    let mut slow = raw(addr);
    let prefix = 4u64.to_le_bytes();
    let mut closed = false;
    for &byte in prefix.iter().cycle().take(200) {
        if slow.write_all(&[byte]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        let mut probe = [0u8; 1];
        slow.set_nonblocking(true).unwrap();
        let r = slow.read(&mut probe);
        slow.set_nonblocking(false).unwrap();
        if matches!(r, Ok(0)) || matches!(&r, Err(e) if e.kind() != std::io::ErrorKind::WouldBlock)
        {
            closed = true;
            break;
        }
    }
    assert!(closed, "slow-loris client still connected after 20 s");
    assert!(started.elapsed() < Duration::from_secs(5));
    let stats = server.shutdown().unwrap();
    assert_eq!(stats.idle_timeouts, 1, "{stats}");
    assert_eq!(stats.read_timeouts, 1, "{stats}");
}

#[test]
fn frames_are_judged_by_their_header_before_any_allocation() {
    let set = vectors();
    let ctx = &set.context;
    // Without a network: a pair frame claiming the largest length is refused from its
    // prefix and header alone.
    let mut session = Session::new(4096);
    assert!(session
        .handle(&frames::encode_profile(&ctx.moduli_values()).unwrap())
        .is_empty());
    let head = [
        u64::from(frames::CMD_RLMD),
        frames::word(2, 4),
        frames::word(0, 2),
    ];
    let refusal = session.admit(frames::MAX_FRAME_WORDS, &head).unwrap_err();
    assert_eq!(refusal.code, codes::MALFORMED);
    assert!(matches!(
        refusal.error,
        EvalMultError::Frame(FrameError::PairLength { .. })
    ));
    let ok = session.admit(3 + 4096 * 16, &head).unwrap();
    assert_eq!(ok.frame_bytes, 8 * (3 + 4096 * 16));

    // Over the network: four 32 MiB junk frames sent in full (the old server buffered each
    // whole), then four frames whose header fits but whose length does not.
    let server = start(quick_config());
    let addr = server.local_addr();
    let mut stream = raw(addr);
    let junk_words: u64 = 4 << 20;
    let body = vec![0xA5u8; 8 << 20];
    for _ in 0..4 {
        stream.write_all(&junk_words.to_le_bytes()).unwrap();
        stream.write_all(&[0x11; 24]).unwrap();
        let mut left = 8 * junk_words as usize - 24;
        while left > 0 {
            let n = left.min(body.len());
            stream.write_all(&body[..n]).unwrap();
            left -= n;
        }
        let message = expect_rler(&mut stream, codes::MALFORMED);
        assert!(message.contains("unknown command"), "{message}");
    }
    send(
        &mut stream,
        &frames::encode_profile(&ctx.moduli_values()).unwrap(),
    );
    for _ in 0..4 {
        stream.write_all(&(1u64 << 24).to_le_bytes()).unwrap();
        for w in head {
            stream.write_all(&w.to_le_bytes()).unwrap();
        }
        let mut left = 8 * ((1usize << 24) - 3);
        while left > 0 {
            let n = left.min(body.len());
            stream.write_all(&body[..n]).unwrap();
            left -= n;
        }
        let message = expect_rler(&mut stream, codes::MALFORMED);
        assert!(message.contains("pair frame must have"), "{message}");
    }
    // The connection survived; an honest session on it still matches OpenFHE.
    drop(stream);
    honest_session(addr, &set);
    let stats = server.shutdown().unwrap();
    assert_eq!(stats.frames_refused, 8, "{stats}");
    // Nothing of the junk was ever reserved: the peak is one honest session's.
    assert!(stats.memory_peak < 16 << 20, "{stats}");
}

#[test]
fn memory_caps_refuse_frames_and_the_session_goes_on() {
    let set = vectors();
    let ctx = &set.context;
    let mut config = quick_config();
    config.session_memory = 8 << 20;
    config.total_memory = 12 << 20;
    let server = start(config);
    let addr = server.local_addr();
    // 72 ciphertexts in one RLMD frame: 3 + 4096·(4·72 + 8) words = 9.25 MiB > 8 MiB.
    let big: Vec<_> = (0..36).flat_map(|_| set.pairs.iter().cloned()).collect();
    let mut client = Client::connect(addr).unwrap();
    client.set_timeout(Some(CLIENT_PATIENCE)).unwrap();
    let err = client.eval_mult(ctx, &set.key, &big, None).unwrap_err();
    let EvalMultError::Frame(FrameError::Remote(remote)) = &err else {
        panic!("{err}");
    };
    assert_eq!(remote.code, codes::BUSY, "{err}");
    assert!(remote.message.contains("per-session memory cap"), "{err}");
    // The second pair frame's RLER is still queued; then the same connection serves an
    // honest batch.
    let second = client.receive().unwrap();
    assert_eq!(frames::decode_error(&second).unwrap().0, codes::BUSY);
    let got = client.eval_mult(ctx, &set.key, &set.pairs, None).unwrap();
    assert_eq!(&got, set.expected.as_ref().unwrap());

    // The global cap: one connection holds a half-finished session (a 7 MiB frame buffered
    // and accounted); another's frame of the same size no longer fits in 12 MiB.
    let mid: Vec<_> = (0..27).flat_map(|_| set.pairs.iter().cloned()).collect();
    let mut holder = raw(addr);
    send(
        &mut holder,
        &frames::encode_profile(&ctx.moduli_values()).unwrap(),
    );
    send(
        &mut holder,
        &frames::encode_pair_frame(ctx, &set.key, &mid, None, 0).unwrap(),
    );
    let mut other = raw(addr);
    send(
        &mut other,
        &frames::encode_profile(&ctx.moduli_values()).unwrap(),
    );
    // Wait until the holder's frame is accounted.
    std::thread::sleep(Duration::from_millis(300));
    send(
        &mut other,
        &frames::encode_pair_frame(ctx, &set.key, &mid, None, 0).unwrap(),
    );
    let message = expect_rler(&mut other, codes::BUSY);
    assert!(message.contains("global memory cap"), "{message}");
    let stats = server.shutdown().unwrap();
    assert!(stats.memory_refusals >= 3, "{stats}");
    assert!(stats.memory_peak <= 12 << 20, "{stats}");
}

#[test]
fn unfinished_sessions_expire_and_free_their_frames() {
    let set = vectors();
    let ctx = &set.context;
    let mut config = quick_config();
    config.session_timeout = Duration::from_millis(300);
    let server = start(config);
    let addr = server.local_addr();
    let mut stream = raw(addr);
    send(
        &mut stream,
        &frames::encode_profile(&ctx.moduli_values()).unwrap(),
    );
    send(
        &mut stream,
        &frames::encode_pair_frame(ctx, &set.key, &set.pairs, None, 0).unwrap(),
    );
    let message = expect_rler(&mut stream, codes::TIMEOUT);
    assert!(message.contains("session expired"), "{message}");
    // Pair 1 now starts a new session rather than completing the expired one: pair 0 is
    // gone. Then a whole session on the same connection still works.
    send(
        &mut stream,
        &frames::encode_pair_frame(ctx, &set.key, &set.pairs, None, 1).unwrap(),
    );
    send(
        &mut stream,
        &frames::encode_pair_frame(ctx, &set.key, &set.pairs, None, 0).unwrap(),
    );
    let mut results = vec![Vec::new(); 2];
    for _ in 0..2 {
        let Incoming::Frame(frame) = frames::read_frame(&mut stream).unwrap() else {
            panic!("closed");
        };
        assert_eq!(frames::lo(frame[0]), frames::CMD_RLRP);
        let pair = frames::hi(frame[1]) as usize;
        results[pair] = frame;
    }
    let Incoming::Frame(end) = frames::read_frame(&mut stream).unwrap() else {
        panic!("closed");
    };
    assert_eq!(frames::lo(end[0]), frames::CMD_RLEN);
    assert_eq!(
        &frames::decode_results(ctx, 2, &results).unwrap(),
        set.expected.as_ref().unwrap()
    );
    let stats = server.shutdown().unwrap();
    assert_eq!(stats.sessions_expired, 1, "{stats}");
}

#[test]
fn junk_frames_close_the_connection_after_the_error_limit() {
    let mut config = quick_config();
    config.max_errors = 4;
    let server = start(config);
    let mut stream = raw(server.local_addr());
    for k in 0..4u64 {
        send(&mut stream, &[0xdead_0000 + k, k, k]);
        expect_rler(&mut stream, codes::MALFORMED);
    }
    let message = expect_rler(&mut stream, codes::FATAL);
    assert!(message.contains("4 consecutive"), "{message}");
    expect_closed(&mut stream);
    let stats = server.shutdown().unwrap();
    assert_eq!(stats.fatal_closes, 1, "{stats}");
}

#[test]
fn shutdown_finishes_work_in_flight_and_closes_idle_connections() {
    let set = vectors();
    let mut config = quick_config();
    config.shutdown_grace = Duration::from_secs(30);
    config.session_memory = 512 << 20;
    let server = start(config);
    let addr = server.local_addr();
    let mut idle = raw(addr);
    // 256 ciphertexts: long enough a computation to be caught in flight.
    let big: Vec<_> = (0..128).flat_map(|_| set.pairs.iter().cloned()).collect();
    let expected: Vec<_> = (0..128)
        .flat_map(|_| set.expected.clone().unwrap())
        .collect();
    let (context, key) = (set.context.clone(), set.key.clone());
    let client = std::thread::spawn(move || {
        let mut client = Client::connect(addr).unwrap();
        client.set_timeout(Some(Duration::from_secs(60))).unwrap();
        client.eval_mult(&context, &key, &big, None)
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    // RLPT, pair 0, then pair 1 starts the computation.
    while server.stats().computations < 3 || server.stats().computing == 0 {
        assert!(Instant::now() < deadline, "the computation never started");
        std::thread::sleep(Duration::from_millis(1));
    }
    let before = server.stats();
    let stats = server.shutdown().unwrap();
    assert_eq!(
        before.sessions_completed, 0,
        "finished before the shutdown: {before}"
    );
    assert_eq!(stats.cancelled_at_shutdown, 0, "{stats}");
    assert_eq!(client.join().unwrap().unwrap(), expected);
    expect_rler(&mut idle, codes::SHUTDOWN);
    expect_closed(&mut idle);
}

#[test]
fn shutdown_cancels_work_beyond_the_grace_period() {
    let set = vectors();
    let mut config = quick_config();
    config.shutdown_grace = Duration::ZERO;
    config.session_memory = 512 << 20;
    let server = start(config);
    let addr = server.local_addr();
    let big: Vec<_> = (0..128).flat_map(|_| set.pairs.iter().cloned()).collect();
    let (context, key) = (set.context.clone(), set.key.clone());
    let client = std::thread::spawn(move || {
        let mut client = Client::connect(addr).unwrap();
        client.set_timeout(Some(Duration::from_secs(60))).unwrap();
        client.eval_mult(&context, &key, &big, None)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.stats().computations < 3 || server.stats().computing == 0 {
        assert!(Instant::now() < deadline, "the computation never started");
        std::thread::sleep(Duration::from_millis(1));
    }
    let started = Instant::now();
    let stats = server.shutdown().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(stats.cancelled_at_shutdown, 1, "{stats}");
    assert!(client.join().unwrap().is_err());
}
