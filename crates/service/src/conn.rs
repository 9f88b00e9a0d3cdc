//! The service's accept loop: HTTP/1 connections with a header-read timeout, an idle
//! (keep-alive) timeout and a cap on open connections below the process's file-descriptor
//! limit. At the cap, the connection idle the longest (no request in progress: waiting for
//! headers, or kept alive) is closed to make room; when every connection is busy the new one
//! is closed at once. The peer address reaches the handlers as a [`PeerAddr`] extension.
//!
//! With TLS the handshake runs inside the connection's own task under the header-read
//! timeout (a slow handshake holds only its own slot), then [`serve_stream`] serves the TLS
//! stream like a TCP one; a verified client certificate's device reaches the handlers as a
//! [`ClientIdentity`] extension.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

use crate::tls::{ClientIdentity, TlsServer};

/// File descriptors kept free of connections (the store, its journal, logs, key reloads).
const FD_HEADROOM: u64 = 64;

/// The peer address of the connection a request came on (a request extension).
#[derive(Clone, Copy, Debug)]
pub struct PeerAddr(pub SocketAddr);

/// Connection limits of the accept loop.
#[derive(Clone, Debug)]
pub struct ConnLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Time a client has to send a request's headers.
    pub header_read_timeout: Duration,
    /// Time a connection may stay open with no request in progress.
    pub idle_timeout: Duration,
}

/// The default connection cap: the soft `RLIMIT_NOFILE` less [`FD_HEADROOM`], at least 16
/// (1,024 when the limit cannot be read).
pub fn default_max_connections() -> usize {
    let limit = fd_limit().unwrap_or(1024 + FD_HEADROOM);
    usize::try_from(limit.saturating_sub(FD_HEADROOM).max(16)).unwrap_or(1024)
}

#[cfg(unix)]
fn fd_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a valid, exclusive pointer.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    // rlim_t is u64 on Linux, but not on every unix.
    #[allow(clippy::useless_conversion)]
    (rc == 0).then(|| u64::try_from(limit.rlim_cur).unwrap_or(u64::MAX))
}

#[cfg(not(unix))]
fn fd_limit() -> Option<u64> {
    None
}

/// One open connection as the loop sees it.
struct Slot {
    /// Requests in progress on it.
    busy: AtomicUsize,
    /// Milliseconds since the loop started at which it last became idle.
    idle_since_ms: AtomicU64,
    /// Wakes the connection's task to close it (eviction or shutdown).
    close: Notify,
}

/// The open connections, oldest first.
struct Registry {
    started: Instant,
    next_id: AtomicU64,
    slots: Mutex<BTreeMap<u64, Arc<Slot>>>,
}

impl Registry {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Slot>>> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a new connection if there is room, closing the longest-idle one at the cap;
    /// `None`: every connection is busy.
    fn admit(&self, max: usize) -> Option<(u64, Arc<Slot>)> {
        let mut slots = self.slots();
        if slots.len() >= max {
            let oldest_idle = slots
                .iter()
                .filter(|(_, s)| s.busy.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, s)| s.idle_since_ms.load(Ordering::Acquire))
                .map(|(&id, _)| id)?;
            if let Some(evicted) = slots.remove(&oldest_idle) {
                evicted.close.notify_one();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot {
            busy: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(self.now_ms()),
            close: Notify::new(),
        });
        slots.insert(id, slot.clone());
        Some((id, slot))
    }

    fn remove(&self, id: u64) {
        self.slots().remove(&id);
    }
}

/// Marks its connection busy while a request is in progress.
struct BusyGuard {
    slot: Arc<Slot>,
    registry: Arc<Registry>,
}

impl BusyGuard {
    fn new(slot: Arc<Slot>, registry: Arc<Registry>) -> Self {
        slot.busy.fetch_add(1, Ordering::AcqRel);
        Self { slot, registry }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.slot
            .idle_since_ms
            .store(self.registry.now_ms(), Ordering::Release);
        self.slot.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `app` on `listener` under `limits` until `stop` fires, then closes idle
/// connections, lets requests in progress finish and returns once every connection is closed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    tls: Option<TlsServer>,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let registry = Arc::new(Registry {
        started: Instant::now(),
        next_id: AtomicU64::new(0),
        slots: Mutex::new(BTreeMap::new()),
    });
    let max = limits.max_connections.max(1);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.changed() => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors (EMFILE/ENFILE) or a connection reset before accept:
                // back off briefly instead of spinning; idle connections time out meanwhile.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some((id, slot)) = registry.admit(max) else {
            tracing::warn!(
                max,
                "connection cap reached with every connection busy; closed a new one"
            );
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (app, limits, registry, stop, tls) = (
            app.clone(),
            limits.clone(),
            registry.clone(),
            stop.clone(),
            tls.clone(),
        );
        tokio::spawn(async move {
            let slot = Accepted {
                peer,
                slot,
                registry: registry.clone(),
            };
            match tls {
                None => serve_stream(stream, None, app, &limits, slot, stop).await,
                Some(tls) => {
                    let handshake = tls.acceptor().accept(stream);
                    match tokio::time::timeout(limits.header_read_timeout, handshake).await {
                        Ok(Ok(stream)) => {
                            let identity = stream
                                .get_ref()
                                .1
                                .peer_certificates()
                                .and_then(|chain| chain.first())
                                .and_then(crate::tls::client_identity);
                            serve_stream(stream, identity, app, &limits, slot, stop).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
            registry.remove(id);
        });
    }
    // Stop: every connection finishes its request in progress and closes.
    for slot in registry.slots().values() {
        slot.close.notify_one();
    }
    while !registry.slots().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// An admitted connection: its peer and its slot in the registry.
struct Accepted {
    peer: SocketAddr,
    slot: Arc<Slot>,
    registry: Arc<Registry>,
}

/// Serves one connection (any byte stream: TCP, or TLS over TCP) until it closes, idles
/// beyond the idle timeout, is evicted or the server stops.
async fn serve_stream<S>(
    stream: S,
    identity: Option<ClientIdentity>,
    app: Router,
    limits: &ConnLimits,
    accepted: Accepted,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Accepted {
        peer,
        slot,
        registry,
    } = accepted;
    let guard_slot = slot.clone();
    let guard_registry = registry.clone();
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        let guard = BusyGuard::new(guard_slot.clone(), guard_registry.clone());
        request.extensions_mut().insert(PeerAddr(peer));
        if let Some(identity) = &identity {
            request.extensions_mut().insert(identity.clone());
        }
        let app = app.clone();
        // Boxed so that the connection is Unpin (`poll_without_shutdown` needs it).
        Box::pin(async move {
            let response: Result<_, Infallible> = app.oneshot(request.map(Body::new)).await;
            drop(guard);
            response
        })
    });
    let mut conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let idle_ms = u64::try_from(limits.idle_timeout.as_millis()).unwrap_or(u64::MAX);
    let ended = loop {
        tokio::select! {
            result = std::future::poll_fn(|cx| conn.poll_without_shutdown(cx)) => break Some(result),
            _ = slot.close.notified() => break None,
            _ = stop.changed() => break None,
            _ = tick.tick() => {
                let idle_for = registry
                    .now_ms()
                    .saturating_sub(slot.idle_since_ms.load(Ordering::Acquire));
                if slot.busy.load(Ordering::Acquire) == 0 && idle_for >= idle_ms {
                    break None;
                }
            }
        }
    };
    match ended {
        // Hyper is done with the connection: the client closed it, or the answer went out
        // with the request's body unread (e.g. a 401 or 413), which ends the connection.
        Some(Ok(())) => linger(conn.into_parts().io.into_inner()).await,
        Some(Err(e)) => tracing::debug!(%peer, error = %e, "connection ended"),
        None => {
            // Closes at once when idle, else after the request in progress.
            Pin::new(&mut conn).graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// How long and how much of what a client is still sending is read and dropped after the
/// server has closed its side ([`linger`]).
const LINGER_TIME: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 1 << 20;

/// A lingering close (RFC 9112 §9.6): the server's side is shut down (the client reads the
/// answer and then end of file), then what the client still sends is read and dropped, for
/// at most [`LINGER_TIME`] and [`LINGER_BYTES`]. A socket closed with unread bytes in it
/// sends a reset, and a reset can discard an answer the client has not read yet: a device
/// still writing its body would see "connection reset" instead of its 401 or 413.
async fn linger<S: AsyncRead + AsyncWrite + Unpin>(mut io: S) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if io.shutdown().await.is_err() {
        return;
    }
    // In the connection task's own state: most connections end with the client's close, and
    // the first read then returns 0, so no allocation for what is usually nothing.
    let mut buf = [0u8; 4096];
    let mut left = LINGER_BYTES;
    let _ = tokio::time::timeout(LINGER_TIME, async {
        while left > 0 {
            match io.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}
