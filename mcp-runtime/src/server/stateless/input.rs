//! Input-required: the questions a stateless handler asks instead of sending requests to the
//! client, and the peer that records them.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Waker;

use serde_json::{Map, Value, json};

use crate::context::BoxFuture;
use crate::context::{ClientRequestError, Peer, Root};
use crate::protocol::{ErrorObject, LoggingLevel, Outgoing, error_codes};

/// The key of a question to the client (`inputRequests` of the stateless era, a task's input
/// requests): the handler's own, or the method's kind numbered by `next` (`elicit-1`).
pub(crate) fn input_key(key: Option<&str>, method: &str, next: &AtomicU32) -> String {
    match key {
        Some(key) => key.to_owned(),
        None => {
            let kind = match method {
                "elicitation/create" => "elicit",
                "sampling/createMessage" => "sample",
                _ => "roots",
            };
            let n = next.fetch_add(1, Ordering::Relaxed) + 1;
            format!("{kind}-{n}")
        }
    }
}
use crate::server::Sink;

/// The input a stateless request's handler asked for, and the answers it already has.
///
/// A handler that calls `ctx.elicit`, `ctx.sample` or `ctx.roots` gets the answer when the
/// client's retry carried a well-formed one under the question's key (the key the handler chose
/// with `ctx.input(key)`, or else one numbered in the order the handler asks: `elicit-1`,
/// `sample-2`, ...); otherwise the question is recorded here and the call never completes, and
/// the dispatcher ends the handler and answers `input_required`, asking again for an answer that
/// was missing or malformed. A retry replays the handler from the start with every answer so far.
#[derive(Default)]
pub(crate) struct Inputs {
    answers: Mutex<Map<String, Value>>,
    next: AtomicU32,
    asked: Mutex<Map<String, Value>>,
    missing: Mutex<Map<String, Value>>,
    waker: Mutex<Option<Waker>>,
}

/// Why a stateless handler was stopped before it finished.
pub(crate) enum Interrupt {
    /// It asked for input the client must provide: the input requests, by key.
    InputRequired(Map<String, Value>),
    /// It needed a client capability the request did not declare (-32021).
    MissingCapability(Map<String, Value>),
}

impl Inputs {
    fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        mutex.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds the answers a retry carried.
    pub(crate) fn answer(&self, answers: Map<String, Value>) {
        Self::lock(&self.answers).extend(answers);
    }

    /// Every answer known, for the next `requestState`.
    pub(crate) fn answers(&self) -> Map<String, Value> {
        Self::lock(&self.answers).clone()
    }

    /// Remembers the task to wake when the handler asks for something.
    pub(crate) fn watch(&self, waker: &Waker) {
        let mut slot = Self::lock(&self.waker);
        if !slot.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *slot = Some(waker.clone());
        }
    }

    /// Whether the handler must be stopped, and why.
    pub(crate) fn interrupt(&self) -> Option<Interrupt> {
        let missing = Self::lock(&self.missing);
        if !missing.is_empty() {
            return Some(Interrupt::MissingCapability(missing.clone()));
        }
        let asked = Self::lock(&self.asked);
        (!asked.is_empty()).then(|| Interrupt::InputRequired(asked.clone()))
    }

    fn wake(&self) {
        if let Some(waker) = Self::lock(&self.waker).take() {
            waker.wake();
        }
    }

    fn ask(&self, key: Option<&str>, method: &'static str, params: Value) -> Option<Value> {
        let key = input_key(key, method, &self.next);
        {
            let mut answers = Self::lock(&self.answers);
            match answers.get(&key) {
                Some(answer) if well_formed(method, answer) => return Some(answer.clone()),
                // Not an answer to this question (`"user_name": 12345`): asked again, and not
                // carried into the next `requestState`.
                Some(_) => drop(answers.remove(&key)),
                None => {}
            }
        }
        Self::lock(&self.asked).insert(key, json!({"method": method, "params": params}));
        self.wake();
        None
    }
}

/// Whether `answer` has the shape of a result of `method`: an object with the member the
/// context reads first (elicitation's `action`, sampling's `content`, the `roots` list).
fn well_formed(method: &str, answer: &Value) -> bool {
    match method {
        "elicitation/create" => answer.get("action").is_some_and(Value::is_string),
        "sampling/createMessage" => answer.get("content").is_some_and(|c| !c.is_null()),
        "roots/list" => answer.get("roots").is_some_and(Value::is_array),
        _ => answer.is_object(),
    }
}

/// A stateless request's way back: its own stream for progress and logs, and the input-required
/// bookkeeping in place of requests to the client, which this era forbids.
pub(crate) struct StatelessPeer {
    pub(crate) sink: Sink,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) inputs: Arc<Inputs>,
}

impl Peer for StatelessPeer {
    fn send(&self, message: Outgoing) {
        let _ = self.sink.send(message);
    }

    fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    fn request(
        &self,
        key: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        self.ask(key, method, params)
    }

    fn missing_capability(
        &self,
        name: &'static str,
        capability: Value,
    ) -> BoxFuture<ClientRequestError> {
        if let Value::Object(capability) = capability {
            Inputs::lock(&self.inputs.missing).extend(capability);
        }
        self.inputs.wake();
        let _ = name;
        Box::pin(std::future::pending())
    }

    fn cached_roots(&self) -> Option<Vec<Root>> {
        None
    }

    fn cache_roots(&self, _: Vec<Root>) {}
}

impl StatelessPeer {
    /// A question to the client, under `key` or else a numbered one: the answer when the client
    /// already gave it, otherwise recorded for the `input_required` result.
    fn ask(
        &self,
        key: Option<&str>,
        method: &'static str,
        params: Value,
    ) -> BoxFuture<Result<Value, ClientRequestError>> {
        if !matches!(
            method,
            "elicitation/create" | "sampling/createMessage" | "roots/list"
        ) {
            // `ping` and anything else: servers send no requests in this era.
            return Box::pin(std::future::ready(Err(ClientRequestError::Unsupported(
                method,
            ))));
        }
        match self.inputs.ask(key, method, params) {
            Some(answer) => Box::pin(std::future::ready(Ok(answer))),
            None => Box::pin(std::future::pending()),
        }
    }
}

/// The `inputRequests` result that ends a handler waiting for input.
pub(crate) fn input_required(requests: Map<String, Value>, state: String) -> Value {
    json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state,
    })
}

/// -32021 for a handler that needed what the client did not declare.
pub(crate) fn missing_capability(required: Map<String, Value>) -> ErrorObject {
    ErrorObject::new(
        error_codes::MISSING_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(json!({ "requiredCapabilities": required }))
}
