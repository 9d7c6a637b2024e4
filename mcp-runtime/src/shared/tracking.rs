//! The connection that reads session records into the [`RecordCache`]: RESP3, with
//! `CLIENT TRACKING ON`, so Redis remembers which keys it read and pushes an invalidation on it
//! as soon as another client changes or deletes one of them, or one expires. The pushes are
//! applied to the cache inside the connection's reader, in the order they come, before any
//! later reply is handed over (see `record_cache` for why that keeps the cache exact).
//!
//! A record is read with `PTTL` and `GET` in one round trip, so the cache knows when the key
//! expires. A heartbeat (`PING` four times a lease, only while the cache holds records) keeps
//! the cache trusted while nothing else is read; a connection that drops or stops answering
//! is replaced, and the cache emptied, since invalidations may have been lost with it. While
//! there is no tracking connection, records are read through the store's ordinary connection
//! and not cached.
//!
//! Not redis-rs's own client-side cache (`cache-aio`): it stores a reply after the reader has
//! handed it over, so an invalidation read in between is applied to nothing and the old value
//! stays cached until its client-side TTL (the race lettuce fixed in redis/lettuce#3481 with
//! the same placeholder this cache uses), and it has no heartbeat, so a connection that goes
//! silent keeps serving. Redis's own guide asks for both.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::{PushInfo, PushKind, Value};

use super::record_cache::{LEASE, RecordCache};
use crate::server::store::StoredRecord;

/// How often the heartbeat runs.
const HEARTBEAT: Duration = Duration::from_millis(250);

/// The tracking connection of one replica, and its cache.
pub(crate) struct Tracking {
    /// The store's client, speaking RESP3.
    client: redis::Client,
    cache: Arc<RecordCache>,
    link: Arc<Mutex<Link>>,
    timeout: Duration,
}

#[derive(Default)]
struct Link {
    /// The live connection and its generation.
    connection: Option<(MultiplexedConnection, u64)>,
    /// The generation of the newest connection made.
    generation: u64,
}

/// Why a record was not read on the tracking connection.
pub(crate) enum Unread {
    /// There is no tracking connection now (or it just dropped): read it the ordinary way.
    NoLink,
    /// Redis failed the read, or did not answer in time.
    Failed(redis::RedisError),
}

impl Tracking {
    /// Opens the tracking connection for `cache`, whose keys are the session keys; fails when
    /// Redis cannot track (not RESP3: before Redis 6, or a server that only looks like Redis).
    pub(crate) async fn open(
        client: &redis::Client,
        cache: Arc<RecordCache>,
        timeout: Duration,
    ) -> Result<Arc<Self>, redis::RedisError> {
        let info = client.get_connection_info().clone();
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(redis::ProtocolVersion::RESP3);
        let client = redis::Client::open(info.set_redis_settings(settings))?;
        let tracking = Arc::new(Self {
            client,
            cache,
            link: Arc::default(),
            timeout,
        });
        tracking.connect().await?;
        tokio::spawn(heartbeat(Arc::downgrade(&tracking)));
        Ok(tracking)
    }

    /// Makes a new tracking connection, in place of any other.
    async fn connect(&self) -> Result<(), redis::RedisError> {
        let generation = {
            let mut link = self.link.lock().unwrap_or_else(|e| e.into_inner());
            link.generation += 1;
            link.generation
        };
        let cache = Arc::clone(&self.cache);
        let link = Arc::downgrade(&self.link);
        let on_push = move |push: PushInfo| -> Result<(), std::convert::Infallible> {
            match push.kind {
                PushKind::Invalidate => match push.data.first() {
                    Some(Value::Array(keys)) => {
                        for key in keys {
                            if let Value::BulkString(key) = key {
                                cache.invalidate(key);
                            }
                        }
                    }
                    // `null` after FLUSHALL or FLUSHDB: every key went.
                    _ => cache.clear(),
                },
                PushKind::Disconnection => {
                    if let Some(link) = link.upgrade() {
                        drop_link(&link, &cache, generation);
                    }
                }
                _ => {}
            }
            Ok(())
        };
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_push_sender(on_push);
        let mut connection = tokio::time::timeout(
            self.timeout * 2,
            self.client
                .get_multiplexed_async_connection_with_config(&config),
        )
        .await
        .map_err(|_| timed_out())??;
        redis::cmd("CLIENT")
            .arg("TRACKING")
            .arg("ON")
            .exec_async(&mut connection)
            .await?;
        let mut link = self.link.lock().unwrap_or_else(|e| e.into_inner());
        // A newer connection was made meanwhile: that one serves.
        if link.generation == generation {
            // Whatever the old connection vouched for goes with it.
            self.cache.reset();
            link.connection = Some((connection, generation));
        }
        Ok(())
    }

    fn connection(&self) -> Option<(MultiplexedConnection, u64)> {
        self.link
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .connection
            .clone()
    }

    /// The record of session `id` if the cache holds it and may serve it now.
    pub(crate) fn cached(&self, id: &str) -> Option<StoredRecord> {
        self.cache.get(id)
    }

    /// The record at `key` (session `id`), read on the tracking connection and kept.
    /// `Ok(None)` when Redis has no such key.
    pub(crate) async fn read(&self, id: &str, key: &str) -> Result<Option<StoredRecord>, Unread> {
        let Some((mut connection, generation)) = self.connection() else {
            return Err(Unread::NoLink);
        };
        let token = self.cache.begin(id);
        let sent = Instant::now();
        let reply: Result<(i64, Option<String>), _> = redis::pipe()
            .cmd("PTTL")
            .arg(key)
            .cmd("GET")
            .arg(key)
            .query_async(&mut connection)
            .await;
        let abandon = || {
            if let Some(token) = token {
                self.cache.abandon(id, token);
            }
        };
        match reply {
            Ok((ttl_ms, json)) => {
                self.cache.confirm(sent);
                let Some(json) = json else {
                    abandon();
                    return Ok(None);
                };
                let json: Arc<str> = json.into();
                // -1: no expiry (written by something else than this crate); not kept.
                match (token, u64::try_from(ttl_ms)) {
                    (Some(token), Ok(ttl_ms)) if ttl_ms > 0 => Ok(Some(self.cache.fill(
                        id,
                        token,
                        json,
                        sent + Duration::from_millis(ttl_ms),
                    ))),
                    _ => {
                        abandon();
                        Ok(Some(StoredRecord { version: 0, json }))
                    }
                }
            }
            Err(error) => {
                abandon();
                if error.is_connection_dropped() || error.is_unrecoverable_error() {
                    drop_link(&self.link, &self.cache, generation);
                    return Err(Unread::NoLink);
                }
                Err(Unread::Failed(error))
            }
        }
    }
}

fn timed_out() -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Io, "timed out connecting"))
}

/// Forgets the connection of `generation` (if it is still the live one) and empties the
/// cache: invalidations may have been lost with it.
fn drop_link(link: &Mutex<Link>, cache: &RecordCache, generation: u64) {
    let mut link = link.lock().unwrap_or_else(|e| e.into_inner());
    if link
        .connection
        .as_ref()
        .is_some_and(|(_, live)| *live == generation)
    {
        link.connection = None;
        cache.reset();
        tracing::debug!("shared store: the tracking connection dropped; the record cache is empty");
    }
}

/// Keeps the cache trusted while it holds records (a `PING` answered vouches for it, as any
/// reply does), and makes a new tracking connection when there is none. Runs while the store
/// lives.
async fn heartbeat(tracking: Weak<Tracking>) {
    let mut reconnect_at = Instant::now();
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        let Some(tracking) = tracking.upgrade() else {
            return;
        };
        match tracking.connection() {
            Some((mut connection, generation)) => {
                if tracking.cache.is_empty() {
                    continue;
                }
                let sent = Instant::now();
                let ping = redis::cmd("PING");
                match tokio::time::timeout(LEASE, ping.query_async::<()>(&mut connection)).await {
                    Ok(Ok(())) => tracking.cache.confirm(sent),
                    Ok(Err(error)) => {
                        tracing::debug!(%error, "shared store: the tracking connection failed a PING; replacing it");
                        drop_link(&tracking.link, &tracking.cache, generation);
                    }
                    Err(_) => {
                        tracing::debug!(
                            "shared store: the tracking connection did not answer a PING within the lease; replacing it"
                        );
                        drop_link(&tracking.link, &tracking.cache, generation);
                    }
                }
            }
            None if Instant::now() >= reconnect_at => {
                reconnect_at = Instant::now() + Duration::from_millis(500);
                match tracking.connect().await {
                    Ok(()) => tracing::debug!("shared store: the tracking connection is back"),
                    Err(error) => {
                        tracing::debug!(%error, "shared store: the tracking connection is still down");
                    }
                }
            }
            None => {}
        }
    }
}
