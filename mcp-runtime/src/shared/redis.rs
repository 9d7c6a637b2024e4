//! [`SharedStore`] on Redis (the `redis` crate): a connection manager for commands (it
//! reconnects by itself; every command has a timeout), and a pub/sub connection of its own for
//! the fan-out, reopened whenever it drops.
//!
//! The manager replaces a dropped connection only once a command has failed on it. So after
//! Redis restarts (or the connection drops while the replica is idle) the first command of each
//! replica would fail although Redis is back. Commands that may run twice with the effect of
//! once (reads, and writes of values that do not depend on what is stored) go through
//! [`Retrying`], which sends such a command once more, on the connection the manager opens in
//! place of the dropped one; the others (appending an event, publishing) are sent once, and a
//! failure is the request's -32603.
//!
//! Session records are read on a connection of their own with client-side caching
//! (`tracking`), and served from the replica's cache until Redis invalidates them.
//!
//! Keys, all under the configured prefix `P`:
//! - `P:session:ID`: the session's record (JSON), expiring after the idle time;
//! - `P:sessions`: sorted set of live session ids, scored by their expiry (ms since the epoch);
//! - `P:subs:URI`: set of the session ids subscribed to `URI`;
//! - `P:log:ID`: list of the standalone stream's events (`SEQ\nDATA`), trimmed to the bound;
//!   `P:seq:ID` its counter; both expire with the session;
//! - `P:request-state-key`: the key signing `requestState`, when none is configured;
//! - channel `P:fanout`: [`Fanout`] messages as JSON.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::record_cache::RecordCache;
use super::tracking::{Tracking, Unread};
use crate::server::store::{Events, Fanout, SessionRecord, SharedStore, StoreError, StoredRecord};

/// How long one command may take before its request gets -32603.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// Numbers an event, logs it (trimmed to the bound), and tells every replica, atomically.
static APPEND: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| {
    redis::Script::new(
        r#"
local sequence = redis.call('INCR', KEYS[1])
redis.call('RPUSH', KEYS[2], sequence .. '\n' .. ARGV[1])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('PUBLISH', KEYS[3], cjson.encode({type = 'event', session = ARGV[3], sequence = sequence, data = ARGV[1]}))
return sequence
"#,
    )
});

/// The Redis store of one replica.
pub(crate) struct RedisStore {
    prefix: String,
    commands: ConnectionManager,
    fanout: tokio::sync::broadcast::Sender<Fanout>,
    replica: u64,
    /// The session records this replica read, kept exact by Redis (`None`: every read goes to
    /// Redis: the cache is off, or Redis cannot track).
    tracking: Option<Arc<Tracking>>,
}

/// `url` as it may be shown (in a startup error, a log): the password of `redis://user:pass@host`
/// (or `redis://:pass@host`) replaced by `***`.
pub(crate) fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let Some((user, _)) = userinfo.split_once(':') else {
        return url.to_owned();
    };
    // `userinfo` is a prefix of `rest`, so what follows it is the host and the rest of the URL.
    let after = rest.get(userinfo.len()..).unwrap_or_default();
    format!("{scheme}://{user}:***{after}")
}

fn failed(error: redis::RedisError) -> StoreError {
    StoreError(error.to_string())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl RedisStore {
    /// Connects, or says why it cannot (a Redis down at startup is a startup error). Session
    /// records are cached, up to `cached_records` of them (`0`: none), when Redis can track
    /// what a connection read (RESP3, Redis 6 or later); else each is read on every request.
    pub(crate) async fn connect(
        url: &str,
        prefix: &str,
        cached_records: usize,
    ) -> Result<Arc<Self>, StoreError> {
        let client = redis::Client::open(url).map_err(failed)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(COMMAND_TIMEOUT))
            .set_response_timeout(Some(COMMAND_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let commands = tokio::time::timeout(
            COMMAND_TIMEOUT * 2,
            client.get_connection_manager_with_config(config),
        )
        .await
        .map_err(|_| StoreError("timed out connecting".into()))?
        .map_err(failed)?;
        let mut replica = [0u8; 8];
        let _ = getrandom::fill(&mut replica);
        let (fanout, _) = tokio::sync::broadcast::channel(1024);
        let tracking = match cached_records {
            0 => None,
            entries => {
                let cache = RecordCache::new(entries, format!("{prefix}:session:"));
                match Tracking::open(&client, Arc::new(cache), COMMAND_TIMEOUT).await {
                    Ok(tracking) => Some(tracking),
                    Err(error) => {
                        tracing::warn!(%error, "shared store: Redis cannot track what is read (RESP3 `CLIENT TRACKING`, Redis 6 or later), so session records are not cached: every request reads its record");
                        None
                    }
                }
            }
        };
        let store = Arc::new(Self {
            prefix: prefix.to_owned(),
            commands,
            fanout,
            replica: u64::from_le_bytes(replica),
            tracking,
        });
        // The first subscription is made before serving, so no message is missed after.
        let pubsub = subscribe(&client, &store.channel()).await?;
        tokio::spawn(listen(
            client,
            store.channel(),
            Arc::downgrade(&store),
            pubsub,
        ));
        Ok(store)
    }

    /// A key under the prefix.
    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    /// A connection for commands (it reconnects by itself), each sent once; [`retrying`]
    /// (Self::retrying) for commands that may run twice.
    pub(crate) fn commands(&self) -> ConnectionManager {
        self.commands.clone()
    }

    /// A connection for commands that may run twice with the effect of once: one that finds
    /// the connection dropped is sent again on its replacement.
    pub(crate) fn retrying(&self) -> Retrying {
        Retrying(self.commands.clone())
    }

    /// The fan-out channel.
    pub(crate) fn channel(&self) -> String {
        self.key(&["fanout"])
    }

    /// The key signing `requestState`, the same on every replica: the first replica's random
    /// one, kept in Redis.
    pub(crate) async fn request_state_key(&self, fresh: [u8; 32]) -> Result<Vec<u8>, StoreError> {
        let key = self.key(&["request-state-key"]);
        let mut connection = self.retrying();
        let _: bool = connection.set_nx(&key, &fresh[..]).await.map_err(failed)?;
        connection.get(&key).await.map_err(failed)
    }
}

/// The connection of commands that may run twice with the effect of once (see the module
/// docs): a command that fails because the connection was dropped (or refused) is sent once
/// more, which waits for the connection the manager opens in its place. A command that timed
/// out is not sent again: a Redis that hangs costs a request one timeout, not two.
#[derive(Clone)]
pub(crate) struct Retrying(ConnectionManager);

impl redis::aio::ConnectionLike for Retrying {
    fn req_packed_command<'a>(
        &'a mut self,
        command: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        Box::pin(async move {
            match self.0.req_packed_command(command).await {
                Err(error) if error.is_connection_dropped() => {
                    tracing::debug!(%error, "shared store: a dropped connection; sent again");
                    self.0.req_packed_command(command).await
                }
                done => done,
            }
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        Box::pin(async move {
            match self.0.req_packed_commands(pipeline, offset, count).await {
                Err(error) if error.is_connection_dropped() => {
                    tracing::debug!(%error, "shared store: a dropped connection; sent again");
                    self.0.req_packed_commands(pipeline, offset, count).await
                }
                done => done,
            }
        })
    }

    fn get_db(&self) -> i64 {
        self.0.get_db()
    }
}

async fn subscribe(
    client: &redis::Client,
    channel: &str,
) -> Result<redis::aio::PubSub, StoreError> {
    let mut pubsub = tokio::time::timeout(COMMAND_TIMEOUT, client.get_async_pubsub())
        .await
        .map_err(|_| StoreError("timed out opening pub/sub".into()))?
        .map_err(failed)?;
    pubsub.subscribe(channel).await.map_err(failed)?;
    Ok(pubsub)
}

/// Reads the fan-out channel into the replica's local queue, reconnecting when it drops.
async fn listen(
    client: redis::Client,
    channel: String,
    store: std::sync::Weak<RedisStore>,
    mut pubsub: redis::aio::PubSub,
) {
    loop {
        {
            let mut messages = pubsub.on_message();
            while let Some(message) = messages.next().await {
                let Some(store) = store.upgrade() else { return };
                match serde_json::from_slice::<Fanout>(message.get_payload_bytes()) {
                    Ok(message) => {
                        let _ = store.fanout.send(message);
                    }
                    Err(error) => {
                        tracing::warn!(%error, "shared store: unreadable fan-out message");
                    }
                }
            }
        }
        tracing::warn!("shared store: the pub/sub connection to Redis dropped; reconnecting");
        loop {
            if store.strong_count() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            match subscribe(&client, &channel).await {
                Ok(fresh) => {
                    tracing::info!("shared store: pub/sub reconnected");
                    pubsub = fresh;
                    break;
                }
                Err(error) => tracing::debug!(%error, "shared store: pub/sub still down"),
            }
        }
    }
}

impl SharedStore for RedisStore {
    fn save_session<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        previous: Option<&'a SessionRecord>,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(record).map_err(|e| StoreError(e.to_string()))?;
            let ttl_ms = ttl.as_millis().max(1) as u64;
            let mut pipe = redis::pipe();
            pipe.atomic()
                .pset_ex(self.key(&["session", id]), json, ttl_ms)
                .ignore()
                .pexpire(self.key(&["log", id]), ttl_ms as i64)
                .ignore()
                .pexpire(self.key(&["seq", id]), ttl_ms as i64)
                .ignore();
            if record.initialized {
                pipe.zadd(self.key(&["sessions"]), id, now_ms() + ttl_ms)
                    .ignore();
            }
            let before: &[String] = previous.map_or(&[], |p| &p.subscriptions);
            for uri in &record.subscriptions {
                if !before.contains(uri) {
                    pipe.sadd(self.key(&["subs", uri]), id).ignore();
                }
            }
            for uri in before {
                if !record.subscriptions.contains(uri) {
                    pipe.srem(self.key(&["subs", uri]), id).ignore();
                }
            }
            let mut connection = self.retrying();
            pipe.query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn load_session<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRecord>, StoreError>> {
        Box::pin(async move {
            let key = self.key(&["session", id]);
            if let Some(tracking) = &self.tracking {
                if let Some(record) = tracking.cached(id) {
                    return Ok(Some(record));
                }
                match tracking.read(id, &key).await {
                    Ok(record) => return Ok(record),
                    Err(Unread::Failed(error)) => return Err(failed(error)),
                    // No tracking connection now: read it the ordinary way, uncached.
                    Err(Unread::NoLink) => {}
                }
            }
            let json: Option<String> = self.retrying().get(key).await.map_err(failed)?;
            Ok(json.map(|json| StoredRecord {
                version: 0,
                json: json.into(),
            }))
        })
    }

    fn cached_session(&self, id: &str) -> Option<StoredRecord> {
        self.tracking.as_ref()?.cached(id)
    }

    fn remove_session<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut connection = self.retrying();
            let record = match self.load_session(id).await? {
                Some(stored) => Some(stored.parse()?),
                None => None,
            };
            let mut pipe = redis::pipe();
            pipe.del(self.key(&["session", id]))
                .ignore()
                .del(self.key(&["log", id]))
                .ignore()
                .del(self.key(&["seq", id]))
                .ignore()
                .zrem(self.key(&["sessions"]), id)
                .ignore();
            for uri in record.map(|r| r.subscriptions).unwrap_or_default() {
                pipe.srem(self.key(&["subs", &uri]), id).ignore();
            }
            pipe.query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn count_sessions(&self) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let mut connection = self.retrying();
            let key = self.key(&["sessions"]);
            let (count,): (usize,) = redis::pipe()
                .zrembyscore(&key, 0, now_ms())
                .ignore()
                .zcard(&key)
                .query_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok(count)
        })
    }

    fn append_event<'a>(
        &'a self,
        session: &'a str,
        data: &'a [u8],
        keep: usize,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let mut connection = self.commands.clone();
            // One script, so the numbering, the log and the fan-out happen in the same order.
            let sequence: u64 = APPEND
                .key(self.key(&["seq", session]))
                .key(self.key(&["log", session]))
                .key(self.channel())
                .arg(data)
                .arg(keep.max(1))
                .arg(session)
                .invoke_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok(sequence)
        })
    }

    fn events_after<'a>(
        &'a self,
        session: &'a str,
        after: u64,
    ) -> BoxFuture<'a, Result<Events, StoreError>> {
        Box::pin(async move {
            let mut connection = self.retrying();
            let entries: Vec<Vec<u8>> = connection
                .lrange(self.key(&["log", session]), 0, -1)
                .await
                .map_err(failed)?;
            Ok(entries
                .into_iter()
                .filter_map(|entry| {
                    let mut parts = entry.splitn(2, |b| *b == b'\n');
                    let sequence: u64 = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
                    let data = parts.next()?;
                    (sequence > after).then(|| (sequence, data.to_vec()))
                })
                .collect::<std::collections::BTreeMap<_, _>>()
                .into_iter()
                .collect())
        })
    }

    fn append_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        sequence: u64,
        data: Option<&'a [u8]>,
        last: bool,
        (keep, ttl): (usize, Duration),
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key(&["slog", session, &stream.to_string()]);
            // `SEQ FLAG DATA`: p the priming event, m a message, l the last message.
            let flag = match (data, last) {
                (None, _) => 'p',
                (Some(_), false) => 'm',
                (Some(_), true) => 'l',
            };
            let mut entry = format!("{sequence} {flag} ").into_bytes();
            entry.extend_from_slice(data.unwrap_or_default());
            let message = serde_json::to_string(&Fanout::Stream {
                session: session.to_owned(),
                stream,
                sequence,
                data: data.map(|d| String::from_utf8_lossy(d).into_owned()),
                last,
            })
            .map_err(|e| StoreError(e.to_string()))?;
            let mut connection = self.commands.clone();
            redis::pipe()
                .atomic()
                .rpush(&key, entry)
                .ignore()
                .ltrim(&key, -(keep.max(1) as isize), -1)
                .ignore()
                .pexpire(&key, ttl.as_millis().max(1) as i64)
                .ignore()
                .publish(self.channel(), message)
                .ignore()
                .query_async::<()>(&mut connection)
                .await
                .map_err(failed)
        })
    }

    fn stream_after<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> BoxFuture<'a, Result<Option<(Events, bool)>, StoreError>> {
        Box::pin(async move {
            let mut connection = self.retrying();
            let entries: Vec<Vec<u8>> = connection
                .lrange(self.key(&["slog", session, &stream.to_string()]), 0, -1)
                .await
                .map_err(failed)?;
            if entries.is_empty() {
                return Ok(None);
            }
            let mut done = false;
            let mut events = Vec::new();
            for entry in entries {
                let mut parts = entry.splitn(3, |b| *b == b' ');
                let (Some(sequence), Some(flag), Some(data)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let Some(sequence) = std::str::from_utf8(sequence)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                else {
                    continue;
                };
                done |= flag == b"l";
                if flag != b"p" && sequence > after {
                    events.push((sequence, data.to_vec()));
                }
            }
            Ok(Some((events, done)))
        })
    }

    fn sessions<'a>(
        &'a self,
        uri: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let mut connection = self.retrying();
            match uri {
                Some(uri) => connection
                    .smembers(self.key(&["subs", uri]))
                    .await
                    .map_err(failed),
                None => connection
                    .zrangebyscore(self.key(&["sessions"]), now_ms(), "+inf")
                    .await
                    .map_err(failed),
            }
        })
    }

    fn publish(&self, message: Fanout) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(&message).map_err(|e| StoreError(e.to_string()))?;
            let mut connection = self.commands.clone();
            connection
                .publish::<_, _, ()>(self.channel(), json)
                .await
                .map_err(failed)
        })
    }

    fn receive(&self) -> tokio::sync::broadcast::Receiver<Fanout> {
        self.fanout.subscribe()
    }

    fn replica(&self) -> u64 {
        self.replica
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let mut connection = self.commands.clone();
            let _: String = redis::cmd("PING")
                .query_async(&mut connection)
                .await
                .map_err(failed)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::without_password;

    #[test]
    fn a_url_is_shown_without_its_password() {
        for (url, shown) in [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            ("redis://:s3cret@cache:6379/0", "redis://:***@cache:6379/0"),
            ("rediss://app:s3:cret@cache/1", "rediss://app:***@cache/1"),
            ("redis://app@cache/1", "redis://app@cache/1"),
            ("redis://cache/0?password=x", "redis://cache/0?password=x"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(without_password(url), shown, "{url}");
        }
    }
}
