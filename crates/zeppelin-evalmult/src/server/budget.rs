//! Accounted memory: a global pool shared by all connections and one account per
//! connection, both capped. Bytes are reserved before they are allocated and given back
//! when freed (an account gives back everything when dropped).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The server-wide pool.
#[derive(Debug)]
pub(crate) struct MemoryPool {
    cap: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl MemoryPool {
    pub(crate) fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    fn try_take(&self, bytes: usize) -> bool {
        let taken = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.cap)
            });
        match taken {
            Ok(before) => {
                self.peak.fetch_max(before + bytes, Ordering::Relaxed);
                true
            }
            Err(_) => false,
        }
    }

    fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Bytes reserved now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Most bytes ever reserved at once.
    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

/// Which cap a reservation would break.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OverCap {
    /// The connection's own.
    Session,
    /// The server's.
    Total,
}

/// One connection's account: `held` (kept between frames) plus `in_flight` (the frame
/// being read and processed).
#[derive(Debug)]
pub(crate) struct Account {
    pool: Arc<MemoryPool>,
    cap: usize,
    held: usize,
    in_flight: usize,
}

impl Account {
    pub(crate) fn new(pool: Arc<MemoryPool>, cap: usize) -> Self {
        Self {
            pool,
            cap,
            held: 0,
            in_flight: 0,
        }
    }

    /// Reserves `bytes` for the next frame, or says which cap refuses them.
    pub(crate) fn reserve(&mut self, bytes: usize) -> Result<(), OverCap> {
        let after = self
            .held
            .saturating_add(self.in_flight)
            .saturating_add(bytes);
        if after > self.cap {
            return Err(OverCap::Session);
        }
        if !self.pool.try_take(bytes) {
            return Err(OverCap::Total);
        }
        self.in_flight += bytes;
        Ok(())
    }

    /// After a frame: the connection now keeps `held` bytes and nothing is in flight. The
    /// reservation made for the frame covers any growth; should the state machine keep more
    /// than was reserved, the excess is still accounted (the pool may then exceed its cap
    /// until the next release).
    pub(crate) fn settle(&mut self, held: usize) {
        let reserved = self.held + self.in_flight;
        if held <= reserved {
            self.pool.give_back(reserved - held);
        } else {
            self.pool.used.fetch_add(held - reserved, Ordering::AcqRel);
        }
        self.held = held;
        self.in_flight = 0;
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        self.pool.give_back(self.held + self.in_flight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_enforced_and_everything_is_given_back() {
        let pool = MemoryPool::new(100);
        let mut a = Account::new(pool.clone(), 60);
        let mut b = Account::new(pool.clone(), 60);
        assert_eq!(a.reserve(50), Ok(()));
        assert_eq!(a.reserve(20), Err(OverCap::Session));
        assert_eq!(b.reserve(55), Err(OverCap::Total));
        assert_eq!(b.reserve(50), Ok(()));
        assert_eq!(pool.used(), 100);
        a.settle(10);
        assert_eq!(pool.used(), 60);
        drop(a);
        drop(b);
        assert_eq!(pool.used(), 0);
        assert_eq!(pool.peak(), 100);
    }
}
