//! The runtime side of resources: static resources, URI templates, reading, listing.
//!
//! A `#[resource("scheme://...")]` whose URI has no `{}` expression is a static resource, listed
//! by `resources/list`; one with expressions is a template, listed by `resources/templates/list`
//! and matched against the URI of every `resources/read` (see [`UriTemplate`] for the matching
//! rules and how a URI that several templates match is resolved). Variable values are
//! percent-decoded and parsed with `FromStr`; a value that does not parse is an invalid-params
//! error naming the variable. A value that would escape a root directory (a `..` segment, an
//! absolute path, a NUL) is refused with an invalid-params error, unless the resource opts out
//! with `allow_traversal`. Every variable is screened, not only `{+v}` and exploded ones: a
//! percent-encoded `/` turns any value into a path. A `file:///{+path}` template keeps paths
//! relative; `file://{+path}` binds absolute paths and so needs `allow_traversal`.
//!
//! # Where it sits
//!
//! An item: it may import `tool` (the shared handler types), `completion`, `context`, `protocol`,
//! `schema`, `metadata` and `error`; `skill`, `app`, the server and everything above import it.

mod uri_template;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

pub use self::uri_template::{Binding, Bindings, TemplateError, UriTemplate};
use crate::completion::{Completer, ForwardCompleter};
use crate::context::Context;
use crate::metadata::{Metadata, item_setters};
use crate::protocol::{
    Annotations, Icon, ProtocolVersion, ResourceContents, ResourceLink, TextResourceContents,
};
use crate::tool::{BoxFuture, SourceLocation};

/// Why a resource could not be read. `NotFound` is sent with the code the negotiated revision
/// uses for it (-32002 in the handshake era, -32602 from 2026-07-28), with `data.uri`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// There is no resource at this URI.
    #[error("resource not found")]
    NotFound,
    /// The URI's variables do not make a valid request.
    #[error("{0}")]
    InvalidParams(String),
    /// Reading failed. The message is sent to the client: keep internal detail out of it.
    #[error("{0}")]
    Internal(String),
}

impl From<String> for ResourceError {
    fn from(message: String) -> Self {
        Self::Internal(message)
    }
}

impl From<&str> for ResourceError {
    fn from(message: &str) -> Self {
        Self::Internal(message.to_owned())
    }
}

impl From<std::io::Error> for ResourceError {
    fn from(error: std::io::Error) -> Self {
        match error.kind() {
            std::io::ErrorKind::NotFound => Self::NotFound,
            _ => Self::Internal("the resource could not be read".to_owned()),
        }
    }
}

/// Binary contents, sent base64-encoded as a `blob`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blob(pub Vec<u8>);

/// A type a `#[resource]` can return as its contents.
///
/// `String` is text (`text/plain` unless the resource says otherwise), `Vec<u8>` and [`Blob`] are
/// a base64 `blob` (`application/octet-stream`), [`ResourceContents`] and `Vec<ResourceContents>`
/// are sent as they are. Any other `T: Serialize` is sent as JSON text (`application/json`).
pub trait IntoResourceContents {
    /// The contents of a read of `uri`; `mime_type` is the resource's declared MIME type.
    fn into_resource_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents>;
}

fn text_contents(
    uri: &str,
    mime_type: Option<&str>,
    default_mime: &str,
    text: String,
) -> Vec<ResourceContents> {
    vec![ResourceContents::Text(TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime_type.unwrap_or(default_mime).to_owned()),
        text,
        meta: None,
    })]
}

impl IntoResourceContents for String {
    fn into_resource_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        text_contents(uri, mime_type, "text/plain", self)
    }
}

impl IntoResourceContents for &str {
    fn into_resource_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        text_contents(uri, mime_type, "text/plain", self.to_owned())
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_resource_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        vec![ResourceContents::blob(
            uri,
            mime_type.unwrap_or("application/octet-stream"),
            self,
        )]
    }
}

impl IntoResourceContents for Blob {
    fn into_resource_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        self.0.into_resource_contents(uri, mime_type)
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_resource_contents(self, uri: &str, mime_type: Option<&str>) -> Vec<ResourceContents> {
        vec![self].into_resource_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_resource_contents(mut self, uri: &str, _: Option<&str>) -> Vec<ResourceContents> {
        // Contents without a URI of their own are the URI that was read.
        for contents in &mut self {
            let own = match contents {
                ResourceContents::Text(t) => &mut t.uri,
                ResourceContents::Blob(b) => &mut b.uri,
            };
            if own.is_empty() {
                uri.clone_into(own);
            }
        }
        self
    }
}

/// JSON contents of a serializable value.
pub(crate) fn json_contents<T: Serialize>(
    value: &T,
    uri: &str,
    mime_type: Option<&str>,
) -> Result<Vec<ResourceContents>, ResourceError> {
    let text = serde_json::to_string(value)
        .map_err(|_| ResourceError::Internal("the resource could not be serialized".to_owned()))?;
    Ok(text_contents(uri, mime_type, "application/json", text))
}

/// A concrete resource, as `resources/list` shows it: the MCP `Resource` object, the same type
/// as the [`ResourceLink`] content block (one struct, so the two serialize alike).
pub type ResourceInfo = ResourceLink;

impl ResourceLink {
    /// The object as `version` knows it; `None`, logged, if it does not serialize.
    pub(crate) fn for_version(&self, version: ProtocolVersion) -> Option<Value> {
        // Strings, numbers and JSON maps only: serializing cannot fail. Were it to, the resource
        // is left out of the list and said so, rather than listed as `null`.
        serde_json::to_value(self.clone().shaped_for(version))
            .inspect_err(|error| {
                tracing::error!(resource = %self.uri, %error, "a resource could not be serialized");
            })
            .ok()
    }
}

/// What a template's `list = f` function may return: the template's concrete instances.
pub trait IntoResourceList {
    /// The instances.
    fn into_resource_list(self) -> Vec<ResourceInfo>;
}

impl IntoResourceList for Vec<ResourceInfo> {
    fn into_resource_list(self) -> Vec<ResourceInfo> {
        self
    }
}

/// URIs alone: each instance is named by its URI.
impl IntoResourceList for Vec<String> {
    fn into_resource_list(self) -> Vec<ResourceInfo> {
        self.into_iter()
            .map(|uri| ResourceInfo::new(uri.clone(), uri))
            .collect()
    }
}

pub(crate) type ResourceHandler = Arc<
    dyn Fn(ResourceCall) -> BoxFuture<Result<Vec<ResourceContents>, ResourceError>> + Send + Sync,
>;
pub(crate) type ListHandler = Arc<dyn Fn() -> BoxFuture<Vec<ResourceInfo>> + Send + Sync>;

/// What a resource handler receives: the URI read, the template's variables, the context.
pub struct ResourceCall {
    pub(crate) uri: String,
    pub(crate) bindings: HashMap<String, Binding>,
    pub(crate) context: Context,
    pub(crate) errors: Vec<String>,
    pub(crate) mime_type: Option<Arc<str>>,
}

impl ResourceCall {
    /// The URI being read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The request's context.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The resource's declared MIME type.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    pub(crate) fn take(&mut self, name: &str) -> Binding {
        self.bindings.remove(name).unwrap_or(Binding::Absent)
    }

    pub(crate) fn record(&mut self, error: String) {
        self.errors.push(error);
    }

    pub(crate) fn variables_ok(&self) -> bool {
        self.errors.is_empty()
    }

    pub(crate) fn variable_error(&self) -> ResourceError {
        ResourceError::InvalidParams(format!(
            "invalid URI `{}`: {}",
            self.uri,
            self.errors.join("; ")
        ))
    }
}

/// What a resource or template says about itself, besides its URI.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResourceMetadata {
    pub(crate) name: Cow<'static, str>,
    /// Title, description, icons, `_meta`, where it was written and what its builder found.
    pub(crate) metadata: Metadata,
    pub(crate) mime_type: Option<Arc<str>>,
    pub(crate) size: Option<u64>,
    pub(crate) annotations: Option<Annotations>,
}

/// A resource or a resource template, and the handler that reads it.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) uri: Cow<'static, str>,
    pub(crate) template: Option<UriTemplate>,
    pub(crate) metadata: ResourceMetadata,
    pub(crate) handler: ResourceHandler,
    pub(crate) list: Option<ListHandler>,
    pub(crate) completers: Vec<(String, Completer)>,
    /// Completes every variable elsewhere (a proxied template, at its upstream).
    pub(crate) forward_completion: Option<ForwardCompleter>,
    pub(crate) allow_traversal: bool,
    /// Whether `resources/list` shows it (an app page may be reached only through its tool).
    pub(crate) listed: bool,
    /// Its own middleware (`ResourceDef::layer`, `#[resource(.., layer = ..)]`).
    pub(crate) layer: Option<crate::metadata::ItemLayer>,
}

impl fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceDef")
            .field("uri", &self.uri)
            .field("name", &self.metadata.name)
            .finish_non_exhaustive()
    }
}

impl ResourceDef {
    /// Reads the resource at `uri` (with the template's variables in `bindings`) in `context`:
    /// the one place a [`ResourceCall`] is put together.
    pub(crate) fn call(
        &self,
        uri: String,
        bindings: HashMap<String, Binding>,
        context: Context,
    ) -> BoxFuture<Result<Vec<ResourceContents>, ResourceError>> {
        (self.handler)(ResourceCall {
            uri,
            bindings,
            context,
            errors: Vec::new(),
            mime_type: self.metadata.mime_type.clone(),
        })
    }

    /// The URI, or the URI template.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Whether this is a template.
    pub fn is_template(&self) -> bool {
        self.template.is_some()
    }

    /// What the builder found wrong with the definition.
    pub(crate) fn problems(&self) -> &[String] {
        &self.metadata.metadata.problems
    }

    /// The `Resource` of `resources/list` (static resources) as `version` knows it.
    pub(crate) fn resource_to_wire(&self, version: ProtocolVersion) -> Value {
        self.to_wire("uri", true, version)
    }

    /// The `ResourceTemplate` of `resources/templates/list` as `version` knows it.
    pub(crate) fn template_to_wire(&self, version: ProtocolVersion) -> Value {
        self.to_wire("uriTemplate", false, version)
    }

    /// The object with the URI under `uri_key`, in the member order of [`ResourceLink`]: a
    /// template has no size.
    fn to_wire(&self, uri_key: &str, with_size: bool, version: ProtocolVersion) -> Value {
        let m = &self.metadata;
        let mut object = Map::new();
        object.insert(uri_key.into(), Value::from(&*self.uri));
        object.insert("name".into(), Value::from(&*m.name));
        m.metadata.write_names(&mut object, version);
        if let Some(mime_type) = &m.mime_type {
            object.insert("mimeType".into(), Value::from(&**mime_type));
        }
        if with_size && let Some(size) = m.size {
            object.insert("size".into(), Value::from(size));
        }
        if let Some(annotations) = &m.annotations {
            let mut annotations = annotations.clone();
            if !version.has_structured_output() {
                annotations.last_modified = None;
            }
            match serde_json::to_value(annotations) {
                Ok(annotations) => {
                    object.insert("annotations".into(), annotations);
                }
                // Strings and a number: this cannot happen; were it to, the annotations are left
                // out and said so, rather than sent as `null`.
                Err(error) => tracing::error!(
                    resource = %self.uri,
                    %error,
                    "the annotations could not be serialized"
                ),
            }
        }
        m.metadata.write_extras(&mut object, version);
        Value::Object(object)
    }
}

item_setters!(ResourceBuilder, "resource", def.metadata.metadata);

/// Builds a [`ResourceDef`]; what `#[resource]` expands to drives it.
pub struct ResourceBuilder {
    def: ResourceDef,
}

impl ResourceBuilder {
    /// Starts a resource at `uri` (a URI template when it has `{}` expressions) called `name`.
    pub fn new<F>(
        uri: impl Into<Cow<'static, str>>,
        name: impl Into<Cow<'static, str>>,
        handler: F,
    ) -> Self
    where
        F: Fn(ResourceCall) -> BoxFuture<Result<Vec<ResourceContents>, ResourceError>>
            + Send
            + Sync
            + 'static,
    {
        let uri = uri.into();
        let mut problems = Vec::new();
        let template = match UriTemplate::parse(&uri) {
            Ok(template) if template.is_static() => None,
            Ok(template) => Some(template),
            Err(error) => {
                problems.push(format!("invalid URI template `{uri}`: {error}"));
                None
            }
        };
        Self {
            def: ResourceDef {
                uri,
                template,
                metadata: ResourceMetadata {
                    name: name.into(),
                    metadata: Metadata {
                        problems,
                        ..Metadata::default()
                    },
                    ..ResourceMetadata::default()
                },
                handler: Arc::new(handler),
                list: None,
                completers: Vec::new(),
                forward_completion: None,
                allow_traversal: false,
                listed: true,
                layer: None,
            },
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(&mut self, mime_type: &str) -> &mut Self {
        self.def.metadata.mime_type = Some(Arc::from(mime_type));
        self
    }

    /// Sets the size in bytes.
    pub fn size(&mut self, size: u64) -> &mut Self {
        self.def.metadata.size = Some(size);
        self
    }

    /// Sets the annotations.
    pub fn annotations(&mut self, annotations: Annotations) -> &mut Self {
        self.def.metadata.annotations = Some(annotations);
        self
    }

    /// Lists the template's concrete instances in `resources/list`.
    pub fn list<F>(&mut self, list: F) -> &mut Self
    where
        F: Fn() -> BoxFuture<Vec<ResourceInfo>> + Send + Sync + 'static,
    {
        if self.def.template.is_none() {
            self.def.metadata.metadata.problems.push(
                "`list` is for URI templates; a static resource is listed already".to_owned(),
            );
        }
        self.def.list = Some(Arc::new(list));
        self
    }

    /// Completes the template variable `name` with `completer`.
    pub fn completer(&mut self, name: &str, completer: Completer) -> &mut Self {
        self.def.completers.retain(|(n, _)| n != name);
        self.def.completers.push((name.to_owned(), completer));
        self
    }

    /// Lets values of `{+v}` and exploded path variables contain `..`, absolute paths and NUL.
    pub fn allow_traversal(&mut self) -> &mut Self {
        self.def.allow_traversal = true;
        self
    }

    /// Finishes the definition.
    pub fn build(self) -> ResourceDef {
        self.def
    }
}
