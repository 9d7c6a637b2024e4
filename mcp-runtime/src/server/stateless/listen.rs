//! `subscriptions/listen`: the open listens of a server and the notifications they asked for.

use std::sync::{Arc, Mutex, Weak};

use serde_json::{Map, Value, json};

use super::SUBSCRIPTION_ID_KEY;
use crate::protocol::Members;
use crate::protocol::{ErrorObject, Outgoing, RequestId, ServerCapabilities, encode_notification};
use crate::server::{Account, Charge, ENTRY_OVERHEAD, Sink};

/// One open `subscriptions/listen`: what it asked for, and where its notifications go.
pub(crate) struct Listener {
    id: Value,
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    sink: Sink,
    /// The bytes of `uris`, held from the server's subscription total while the listen lasts.
    _charge: Option<Charge>,
}

impl Listener {
    /// Reads a listen request against what the server advertises: the honored subset, and the
    /// listener for it.
    pub(crate) fn new(
        id: &RequestId,
        params: &impl Members,
        capabilities: &ServerCapabilities,
        sink: Sink,
        (max_subscriptions, max_uri): (usize, usize),
        total: Account,
    ) -> Result<(Self, Value), ErrorObject> {
        let Some(Value::Object(requested)) = params.get("notifications") else {
            return Err(ErrorObject::invalid_params(
                "`subscriptions/listen` needs `notifications`, an object",
            ));
        };
        let wants = |key: &str| requested.get(key).and_then(Value::as_bool) == Some(true);
        let tools = wants("toolsListChanged") && capabilities.tools.is_some_and(|c| c.list_changed);
        let prompts =
            wants("promptsListChanged") && capabilities.prompts.is_some_and(|c| c.list_changed);
        let resources =
            wants("resourcesListChanged") && capabilities.resources.is_some_and(|c| c.list_changed);
        let uris: Vec<String> = match requested.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(uris)) => {
                if uris.len() > max_subscriptions {
                    return Err(ErrorObject::invalid_params(format!(
                        "too many `resourceSubscriptions` (at most {max_subscriptions})"
                    )));
                }
                let mut out = Vec::with_capacity(uris.len());
                for uri in uris {
                    match uri.as_str() {
                        Some(uri) => {
                            crate::server::session::check_subscription(uri, max_uri)?;
                            out.push(uri.to_owned());
                        }
                        None => {
                            return Err(ErrorObject::invalid_params(
                                "`resourceSubscriptions` must be an array of URIs",
                            ));
                        }
                    }
                }
                out
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "`resourceSubscriptions` must be an array of URIs",
                ));
            }
        };
        let uris = if capabilities.resources.is_some_and(|c| c.subscribe) {
            uris
        } else {
            Vec::new()
        };
        let mut honored = Map::new();
        for (key, on) in [
            ("toolsListChanged", tools),
            ("promptsListChanged", prompts),
            ("resourcesListChanged", resources),
        ] {
            if on {
                honored.insert(key.into(), Value::Bool(true));
            }
        }
        if !uris.is_empty() {
            honored.insert("resourceSubscriptions".into(), json!(uris));
        }
        let held = uris.iter().map(|uri| uri.len() + ENTRY_OVERHEAD).sum();
        let charge = match held {
            0 => None,
            held => Some(total.charge(held).ok_or_else(|| {
                ErrorObject::invalid_params(
                    "the server holds as many subscriptions as it can for this client: try again later",
                )
            })?),
        };
        let listener = Self {
            id: id.to_json(),
            tools,
            prompts,
            resources,
            uris,
            sink,
            _charge: charge,
        };
        Ok((listener, Value::Object(honored)))
    }

    fn tagged(&self, method: &str, mut params: Map<String, Value>) -> Outgoing {
        params.insert(
            "_meta".into(),
            json!({ SUBSCRIPTION_ID_KEY: self.id.clone() }),
        );
        Outgoing::Message(encode_notification(method, Some(&params)))
    }

    /// The resources whose updates it asked for.
    pub(crate) fn uris(&self) -> &[String] {
        &self.uris
    }

    /// The final result of a listen the server ends.
    pub(crate) fn teardown(&self) -> Value {
        json!({ "_meta": { SUBSCRIPTION_ID_KEY: self.id.clone() } })
    }
}

/// The open listens of a server.
#[derive(Default)]
pub(crate) struct Listeners(Mutex<Vec<Weak<Listener>>>);

impl Listeners {
    /// Acknowledges and registers a listen in one step, so no notification can overtake the
    /// acknowledgement.
    pub(crate) fn add(&self, listener: &Arc<Listener>, honored: Value) {
        let mut listeners = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut params = Map::new();
        params.insert("notifications".into(), honored);
        let _ = listener
            .sink
            .send(listener.tagged("notifications/subscriptions/acknowledged", params));
        listeners.retain(|l| l.strong_count() > 0);
        listeners.push(Arc::downgrade(listener));
    }

    fn each(&self, mut f: impl FnMut(&Listener)) {
        let listeners = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for listener in listeners.iter().filter_map(Weak::upgrade) {
            f(&listener);
        }
    }

    /// `notifications/<kind>/list_changed` to the listens that asked for it.
    pub(crate) fn list_changed(&self, kind: crate::handle::ListKind, method: &str) {
        use crate::handle::ListKind;
        self.each(|l| {
            let wanted = match kind {
                ListKind::Tools => l.tools,
                ListKind::Prompts => l.prompts,
                ListKind::Resources => l.resources,
            };
            if wanted {
                let _ = l.sink.send(l.tagged(method, Map::new()));
            }
        });
    }

    /// Whether an open listen asked for the updates of `uri`.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn watches(&self, uri: &str) -> bool {
        let mut found = false;
        self.each(|l| found |= l.uris.iter().any(|u| u == uri));
        found
    }

    /// `notifications/resources/updated` to the listens subscribed to `uri`.
    pub(crate) fn resource_updated(&self, uri: &str) {
        self.each(|l| {
            if l.uris.iter().any(|u| u == uri) {
                let mut params = Map::new();
                params.insert("uri".into(), Value::from(uri));
                let _ = l
                    .sink
                    .send(l.tagged("notifications/resources/updated", params));
            }
        });
    }
}
