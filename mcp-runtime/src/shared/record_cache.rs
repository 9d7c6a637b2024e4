//! The session records one replica has read from Redis, kept exact by Redis itself: the
//! connection that reads them has `CLIENT TRACKING` on (RESP3), so Redis pushes an
//! invalidation on that connection whenever another client changes or deletes a key it read,
//! or the key expires (see `tracking`). This module is the cache alone, with no I/O.
//!
//! What keeps it exact:
//!
//! - **No fill after an invalidation.** A read first leaves a placeholder naming it
//!   ([`RecordCache::begin`]); an invalidation removes whatever the key holds, the placeholder
//!   too; the reply is kept only if its own placeholder is still there ([`RecordCache::fill`]).
//!   Redis sends an invalidation on the tracking connection before any later reply, and the
//!   connection applies pushes as it reads them, in order, so a change made before the read's
//!   reply was read is never cached.
//! - **Never past the key's expiry.** A record is held until the time the read was sent plus
//!   the key's `PTTL` as Redis reported it, which is no later than Redis's own expiry.
//! - **Trusted only while the link answers.** A hit is served only while a reply on the tracking
//!   connection sent less than [`LEASE`] ago has come back ([`RecordCache::confirm`]): every
//!   invalidation Redis queued before that command has then been applied. A connection that
//!   drops empties the cache ([`RecordCache::reset`]); one that goes silent (a partition, a hung
//!   Redis) stops being trusted within the lease, and records are read again.
//! - **Bounded**: at most `max_entries` records and [`MAX_BYTES`] of their text; past either,
//!   any entries are dropped (a dropped record is read again on its session's next request).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::server::fast_map::FastMap;
use crate::server::store::StoredRecord;

/// How long a reply on the tracking connection vouches for the cache: a hit needs a command
/// sent less than this long ago to have been answered. The heartbeat sends one four times as
/// often.
pub(crate) const LEASE: Duration = Duration::from_secs(1);

/// The most record text the cache holds, all sessions together.
pub(crate) const MAX_BYTES: usize = 16 * 1024 * 1024;

enum Entry {
    /// A read on the tracking connection is on its way; its token.
    Reading(u64),
    /// A record, served until `until`.
    Held {
        record: StoredRecord,
        until: Instant,
    },
}

struct Inner {
    entries: FastMap<Box<str>, Entry>,
    /// The text held, in bytes.
    bytes: usize,
    /// Hits are served before this instant only.
    trusted_until: Option<Instant>,
    /// The last token handed out (tokens double as versions, so they never repeat).
    last_token: u64,
}

/// The records a replica has read, by session id.
pub(crate) struct RecordCache {
    inner: Mutex<Inner>,
    max_entries: usize,
    /// The Redis key of a session is this followed by its id.
    key_prefix: String,
}

impl RecordCache {
    /// A cache of at most `max_entries` records (`0`: nothing is ever cached) for the keys
    /// `key_prefix` + session id.
    pub(crate) fn new(max_entries: usize, key_prefix: String) -> Self {
        Self {
            inner: Mutex::new(Inner {
                entries: FastMap::default(),
                bytes: 0,
                trusted_until: None,
                last_token: 0,
            }),
            max_entries,
            key_prefix,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The record of session `id`, if the cache holds it and may serve it now.
    pub(crate) fn get(&self, id: &str) -> Option<StoredRecord> {
        let now = Instant::now();
        let inner = self.lock();
        if inner.trusted_until.is_none_or(|until| now >= until) {
            return None;
        }
        match inner.entries.get(id)? {
            Entry::Held { record, until } if now < *until => Some(record.clone()),
            _ => None,
        }
    }

    /// Before a read of `id` on the tracking connection: its placeholder, and the token that
    /// [`fill`](Self::fill) needs; `None` when the cache keeps nothing.
    pub(crate) fn begin(&self, id: &str) -> Option<u64> {
        if self.max_entries == 0 {
            return None;
        }
        let mut inner = self.lock();
        inner.last_token += 1;
        let token = inner.last_token;
        let old = inner.entries.remove(id);
        inner.forget(old);
        while inner.entries.len() >= self.max_entries {
            inner.evict_one();
        }
        inner.entries.insert(id.into(), Entry::Reading(token));
        Some(token)
    }

    /// The reply to the read `token` of `id`: kept until `until` if nothing invalidated it
    /// meanwhile. Returns the record as the caller should see it (with its version when kept).
    pub(crate) fn fill(
        &self,
        id: &str,
        token: u64,
        json: Arc<str>,
        until: Instant,
    ) -> StoredRecord {
        let mut inner = self.lock();
        let ours = matches!(inner.entries.get(id), Some(Entry::Reading(t)) if *t == token);
        if !ours {
            return StoredRecord { version: 0, json };
        }
        inner.entries.remove(id);
        if json.len() > MAX_BYTES || until <= Instant::now() {
            return StoredRecord { version: 0, json };
        }
        while inner.bytes + json.len() > MAX_BYTES {
            inner.evict_one();
        }
        inner.bytes += json.len();
        let record = StoredRecord {
            version: token,
            json,
        };
        inner.entries.insert(
            id.into(),
            Entry::Held {
                record: record.clone(),
                until,
            },
        );
        record
    }

    /// A read that will not fill: its placeholder goes.
    pub(crate) fn abandon(&self, id: &str, token: u64) {
        let mut inner = self.lock();
        if matches!(inner.entries.get(id), Some(Entry::Reading(t)) if *t == token) {
            inner.entries.remove(id);
        }
    }

    /// Redis's invalidation of `key` (a full key, prefix included): whatever the cache holds
    /// for it goes, a read's placeholder too.
    pub(crate) fn invalidate(&self, key: &[u8]) {
        let Some(id) = key
            .strip_prefix(self.key_prefix.as_bytes())
            .and_then(|id| std::str::from_utf8(id).ok())
        else {
            return;
        };
        let mut inner = self.lock();
        let old = inner.entries.remove(id);
        inner.forget(old);
    }

    /// Everything goes, and nothing is served until a new reply vouches for the cache: the
    /// tracking connection dropped (invalidations may have been lost), or Redis flushed.
    pub(crate) fn reset(&self) {
        let mut inner = self.lock();
        inner.entries.clear();
        inner.bytes = 0;
        inner.trusted_until = None;
    }

    /// Everything goes; trust stays (Redis flushed its keys, the connection is fine).
    pub(crate) fn clear(&self) {
        let mut inner = self.lock();
        inner.entries.clear();
        inner.bytes = 0;
    }

    /// A reply came on the tracking connection to a command sent at `sent`: every
    /// invalidation Redis queued before it has been applied, so hits may be served until
    /// `sent` + [`LEASE`].
    pub(crate) fn confirm(&self, sent: Instant) {
        let until = sent + LEASE;
        let mut inner = self.lock();
        if inner.trusted_until.is_none_or(|t| t < until) {
            inner.trusted_until = Some(until);
        }
    }

    /// How many records the cache holds (placeholders included).
    fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether the cache holds nothing (so nothing needs vouching for).
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Inner {
    /// Gives back the bytes of an entry taken out.
    fn forget(&mut self, entry: Option<Entry>) {
        if let Some(Entry::Held { record, .. }) = entry {
            self.bytes = self.bytes.saturating_sub(record.json.len());
        }
    }

    /// Drops one entry, any.
    fn evict_one(&mut self) {
        let Some(id) = self.entries.keys().next().cloned() else {
            self.bytes = 0;
            return;
        };
        let old = self.entries.remove(&id);
        self.forget(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(entries: usize) -> RecordCache {
        let cache = RecordCache::new(entries, "mcp:session:".to_owned());
        cache.confirm(Instant::now());
        cache
    }

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[test]
    fn a_filled_record_is_served_until_it_changes() {
        let cache = cache(10);
        assert!(cache.get("a").is_none());
        let token = cache.begin("a").unwrap();
        let record = cache.fill("a", token, "{}".into(), later());
        assert_ne!(record.version, 0);
        assert_eq!(cache.get("a").unwrap().version, record.version);
        cache.invalidate(b"mcp:session:a");
        assert!(cache.get("a").is_none());
        // Another prefix's key is not ours.
        let token = cache.begin("a").unwrap();
        cache.fill("a", token, "{}".into(), later());
        cache.invalidate(b"other:session:a");
        assert!(cache.get("a").is_some());
    }

    #[test]
    fn an_invalidation_during_a_read_keeps_its_reply_out() {
        let cache = cache(10);
        let token = cache.begin("a").unwrap();
        cache.invalidate(b"mcp:session:a");
        let record = cache.fill("a", token, "{}".into(), later());
        assert_eq!(record.version, 0);
        assert!(cache.get("a").is_none());
        // A newer read's placeholder is not filled by an older reply.
        let old = cache.begin("a").unwrap();
        let new = cache.begin("a").unwrap();
        assert_eq!(cache.fill("a", old, "{}".into(), later()).version, 0);
        assert_ne!(cache.fill("a", new, "{}".into(), later()).version, 0);
    }

    #[test]
    fn a_record_is_not_served_past_its_expiry() {
        let cache = cache(10);
        // Already expired when the reply comes: not kept.
        let token = cache.begin("a").unwrap();
        let record = cache.fill("a", token, "{}".into(), Instant::now());
        assert_eq!(record.version, 0);
        assert!(cache.get("a").is_none());
        let token = cache.begin("a").unwrap();
        let start = Instant::now();
        cache.fill("a", token, "{}".into(), start + Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(60));
        cache.confirm(Instant::now());
        assert!(cache.get("a").is_none());
    }

    #[test]
    fn nothing_is_served_without_a_recent_reply_or_after_a_reset() {
        let cache = RecordCache::new(10, "mcp:session:".to_owned());
        let token = cache.begin("a").unwrap();
        cache.fill("a", token, "{}".into(), later());
        // No reply has vouched for the link yet.
        assert!(cache.get("a").is_none());
        cache.confirm(Instant::now());
        assert!(cache.get("a").is_some());
        // A reply to a command sent longer ago than the lease vouches for nothing now.
        cache.reset();
        let token = cache.begin("a").unwrap();
        cache.fill("a", token, "{}".into(), later());
        if let Some(sent) = Instant::now().checked_sub(LEASE * 2) {
            cache.confirm(sent);
            assert!(cache.get("a").is_none());
        }
        cache.confirm(Instant::now());
        assert!(cache.get("a").is_some());
        cache.reset();
        assert!(cache.get("a").is_none());
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn the_cache_holds_at_most_its_entries_and_bytes() {
        let cache = cache(3);
        for n in 0..10 {
            let id = format!("s{n}");
            let token = cache.begin(&id).unwrap();
            cache.fill(&id, token, "{}".into(), later());
            assert!(cache.len() <= 3);
        }
        let big: Arc<str> = "x".repeat(MAX_BYTES / 2 + 1).into();
        for id in ["b1", "b2"] {
            let token = cache.begin(id).unwrap();
            cache.fill(id, token, Arc::clone(&big), later());
        }
        assert!(cache.lock().bytes <= MAX_BYTES);
        assert!(cache.get("b2").is_some());
        // Too big for the cache at all: returned, not kept.
        let huge: Arc<str> = "x".repeat(MAX_BYTES + 1).into();
        let token = cache.begin("h").unwrap();
        assert_eq!(cache.fill("h", token, huge, later()).version, 0);
        // Zero entries: nothing is kept.
        assert!(RecordCache::new(0, String::new()).begin("a").is_none());
    }
}
