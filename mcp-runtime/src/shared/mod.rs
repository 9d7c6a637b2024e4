//! State shared by the replicas of one server: what a handshake-era session needs so
//! that any replica behind a load balancer can serve its next request.
//!
//! Without a store (the default) every piece of state lives in the one process, as before. With
//! one ([`Server::redis`](crate::Server::redis)) the HTTP transport goes through [`SharedStore`]
//! for:
//!
//! - session records (revision, client info and capabilities, `notifications/initialized`, log
//!   level, resource subscriptions), expiring after the idle time; a replica that does not know
//!   a session rebuilds it from its record. Every request applies its session's record, which
//!   each replica caches (`record_cache`) while Redis says it has not changed (`tracking`:
//!   RESP3 `CLIENT TRACKING`), so an unchanged session costs no round trip;
//! - the standalone (GET) stream's event log, bounded and expiring, and a copy of every POST's
//!   SSE stream, so a stream resumes on any replica with `Last-Event-ID`;
//! - answers to server-to-client requests (elicitation, sampling, roots) that arrive at a
//!   replica other than the one waiting for them;
//! - notifications (`list_changed`, `resources/updated`): written to the event log of every
//!   session concerned, and fanned out to every replica's `subscriptions/listen` streams;
//! - tasks, through the Redis `TaskStore` (`tasks::redis`), whose changes this fan-out announces.
//!
//! # Where it sits
//!
//! The Redis implementation of the server's `SharedStore`
//! (`server/store.rs`), and its connection to a running server (`Core::connect_shared`). It may
//! import the server's core, `handle`, `protocol` and `error`; `tasks` (the Redis task store)
//! and the transports import it, the server never does.

// Without the HTTP transport nothing connects a store.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use std::sync::Arc;

use crate::server::Core;
#[cfg(feature = "redis")]
use crate::server::stateless::request_state::RequestStateKey;
#[cfg(feature = "redis")]
use crate::server::store::StoreError;
use crate::server::store::{Fanout, SharedStore};

#[cfg(feature = "redis")]
mod record_cache;
#[cfg(feature = "redis")]
pub(crate) mod redis;
#[cfg(feature = "redis")]
mod tracking;

impl Core {
    /// Connects the Redis store configured with `Server::redis`, once; an error when Redis cannot
    /// be reached.
    #[cfg(feature = "redis")]
    pub(crate) async fn connect_shared(self: &Arc<Self>) -> crate::error::Result<()> {
        let Some(url) = &self.options.redis else {
            return Ok(());
        };
        let prefix = &self.options.redis_prefix;
        if self.shared.get().is_some() {
            return Ok(());
        }
        let unusable = |error: StoreError| crate::error::Error::Redis {
            url: redis::without_password(url),
            reason: error.0,
        };
        let store = redis::RedisStore::connect(url, prefix, self.options.redis_session_cache)
            .await
            .map_err(unusable)?;
        if self.options.request_state_secret.is_none() {
            let mut fresh = [0u8; 32];
            let _ = getrandom::fill(&mut fresh);
            let key = store.request_state_key(fresh).await.map_err(unusable)?;
            *self
                .request_state
                .write()
                .unwrap_or_else(|e| e.into_inner()) =
                RequestStateKey::from_secret(&key, self.options.request_state_ttl);
        }
        #[cfg(feature = "tasks")]
        self.tasks
            .connect_redis(Arc::clone(&store) as Arc<dyn std::any::Any + Send + Sync>);
        let store: Arc<dyn SharedStore> = store;
        if self.shared.set(Arc::clone(&store)).is_ok() {
            attach(self, store);
        }
        Ok(())
    }
}

/// Connects the store to the server: answers for this replica's sessions, and other replicas'
/// changes for its listen streams. Runs until the server is dropped.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn attach(core: &Arc<Core>, store: Arc<dyn SharedStore>) {
    let mut messages = store.receive();
    let weak = Arc::downgrade(core);
    let replica = store.replica();
    tokio::spawn(async move {
        loop {
            let message = match messages.recv().await {
                Ok(message) => message,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        missed,
                        "shared store: fan-out messages dropped (slow replica)"
                    );
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            let Some(core) = weak.upgrade() else { return };
            match message {
                Fanout::Answer {
                    session,
                    id,
                    message,
                } => core.answer_from_elsewhere(&session, id, message),
                Fanout::Updated { origin, uri } if origin != replica => {
                    core.listeners.resource_updated(&uri);
                }
                Fanout::ListChanged {
                    origin,
                    kind,
                    method,
                } if origin != replica => {
                    if let Some(kind) = crate::handle::ListKind::from_name(&kind) {
                        core.listeners.list_changed(kind, &method);
                    }
                }
                _ => {}
            }
        }
    });
}
