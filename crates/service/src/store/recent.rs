//! [`RecentUploads`]: the bodies of the uploads a [`super::SqliteStore`] committed last, kept in
//! memory (bounded in bytes) so that an aggregation of recent uploads reads them from there.
//!
//! The common aggregation sums what the fleet has just uploaded. Reading those rows back
//! from SQLite costs more than adding them up: about 7 pages of 16 KiB per 98 KB upload,
//! mostly from the WAL, plus a BLAKE3 digest to catch damage on disk. The bodies held here
//! are the very bytes the digest was computed from at append (the same reference-counted
//! buffer the request arrived in), so they are served without either. Only committed
//! appends enter; a committed delete removes its uploads before it is answered; the oldest
//! entries leave first once the bytes exceed the bound. A restarted store starts empty and
//! reads (and checks) everything from disk.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

use crate::names::StreamName;

/// The default bound of [`RecentUploads`]: 256 MiB, some 2,700 uploads of the Seal4096 preset.
pub const DEFAULT_RECENT_BYTES: usize = 256 << 20;

/// A stream's upload, by stream name and id.
type Key = (String, u64);

#[derive(Default)]
struct State {
    /// Each body with the number of its insertion.
    bodies: BTreeMap<Key, (u64, Bytes)>,
    /// Insertion number → key, oldest first (what leaves first).
    order: BTreeMap<u64, Key>,
    /// Bytes of the bodies held.
    bytes: usize,
    /// The next insertion number.
    next: u64,
}

impl State {
    fn remove(&mut self, key: &Key) {
        if let Some((number, body)) = self.bodies.remove(key) {
            self.order.remove(&number);
            self.bytes -= body.len();
        }
    }
}

/// The recently committed uploads (see the module documentation).
pub(super) struct RecentUploads {
    state: Mutex<State>,
    capacity: usize,
}

impl RecentUploads {
    /// Holds at most `capacity` bytes of bodies; 0 holds none.
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            state: Mutex::new(State::default()),
            capacity,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update below leaves the maps and the byte count consistent before it can
        // panic (allocation failure aside), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `body` as upload `id` of `stream` (committed), making room by dropping the
    /// oldest; a body larger than the whole bound is not kept.
    pub(super) fn insert(&self, stream: &StreamName, id: u64, body: Bytes) {
        if body.len() > self.capacity {
            return;
        }
        let mut state = self.state();
        let key = (stream.as_str().to_owned(), id);
        state.remove(&key);
        while state.bytes + body.len() > self.capacity {
            let Some(oldest) = state.order.values().next().cloned() else {
                break;
            };
            state.remove(&oldest);
        }
        let number = state.next;
        state.next += 1;
        state.bytes += body.len();
        state.order.insert(number, key.clone());
        state.bodies.insert(key, (number, body));
    }

    /// Forgets upload `id` of `stream` (deleted).
    pub(super) fn remove(&self, stream: &StreamName, id: u64) {
        self.state().remove(&(stream.as_str().to_owned(), id));
    }

    /// Forgets every upload of `stream` (some of them were deleted).
    pub(super) fn remove_stream(&self, stream: &StreamName) {
        let mut state = self.state();
        let name = stream.as_str().to_owned();
        let keys: Vec<Key> = state
            .bodies
            .range((name.clone(), 0)..=(name, u64::MAX))
            .map(|(key, _)| key.clone())
            .collect();
        for key in &keys {
            state.remove(key);
        }
    }

    /// The bodies held of `ids` in `stream`, in their order (`None` where not held).
    pub(super) fn get_many(&self, stream: &StreamName, ids: &[u64]) -> Vec<Option<Bytes>> {
        let state = self.state();
        let mut key = (stream.as_str().to_owned(), 0);
        ids.iter()
            .map(|&id| {
                key.1 = id;
                state.bodies.get(&key).map(|(_, body)| body.clone())
            })
            .collect()
    }

    /// Bytes of the bodies held.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.state().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(name: &str) -> StreamName {
        StreamName::new(name).expect("a valid test stream name")
    }

    fn body(len: usize, fill: u8) -> Bytes {
        Bytes::from(vec![fill; len])
    }

    #[test]
    fn the_oldest_leave_first_and_the_bound_holds() {
        let recent = RecentUploads::new(250);
        let s = stream("s");
        for id in 1..=5 {
            recent.insert(&s, id, body(100, id as u8));
        }
        // 5 × 100 bytes into 250: the last two stay.
        assert_eq!(recent.bytes(), 200);
        let held = recent.get_many(&s, &[1, 2, 3, 4, 5]);
        assert_eq!(
            held.iter().map(Option::is_some).collect::<Vec<_>>(),
            [false, false, false, true, true]
        );
        assert_eq!(held[4].as_deref(), Some(&[5u8; 100][..]));
        // Larger than the whole bound: not kept, nothing dropped for it.
        recent.insert(&s, 6, body(251, 6));
        assert_eq!(recent.bytes(), 200);
        assert!(recent.get_many(&s, &[6])[0].is_none());
    }

    #[test]
    fn deletes_remove_one_upload_or_a_whole_stream() {
        let recent = RecentUploads::new(10_000);
        let (s, t) = (stream("s"), stream("t"));
        for id in 1..=3 {
            recent.insert(&s, id, body(10, 1));
            recent.insert(&t, id, body(10, 2));
        }
        recent.remove(&s, 2);
        assert_eq!(
            recent
                .get_many(&s, &[1, 2, 3])
                .iter()
                .map(Option::is_some)
                .collect::<Vec<_>>(),
            [true, false, true]
        );
        recent.remove_stream(&s);
        assert!(recent.get_many(&s, &[1, 3]).iter().all(Option::is_none));
        assert!(recent.get_many(&t, &[1, 2, 3]).iter().all(Option::is_some));
        assert_eq!(recent.bytes(), 30);
        // A removed entry leaves no stale place in the eviction order.
        let small = RecentUploads::new(20);
        small.insert(&s, 1, body(10, 1));
        small.remove(&s, 1);
        small.insert(&s, 2, body(10, 2));
        small.insert(&s, 3, body(10, 3));
        assert!(small.get_many(&s, &[2, 3]).iter().all(Option::is_some));
    }

    #[test]
    fn a_zero_bound_holds_nothing() {
        let recent = RecentUploads::new(0);
        recent.insert(&stream("s"), 1, body(1, 1));
        assert_eq!(recent.bytes(), 0);
    }
}
