//! Values that travel with a request: put there by middleware, read by the layers after it and
//! by the handler ([`Extension`]).
//!
//! A type map, one value per type, like `http::Extensions`: the types are your own (a tenant, a
//! database handle, a feature flag), so two layers never clash over a key. A request with no
//! extensions carries a null pointer, and a clone is a reference count: the map is copied only
//! when a request that shares it is changed.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::{Context, ContextError, FromContext};

/// A value that can be stored: any `Clone + Send + Sync + 'static` type.
trait Stored: Any + Send + Sync {
    fn clone_box(&self) -> Box<dyn Stored>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Clone + Send + Sync + 'static> Stored for T {
    fn clone_box(&self) -> Box<dyn Stored> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl Clone for Box<dyn Stored> {
    fn clone(&self) -> Self {
        (**self).clone_box()
    }
}

type Map = HashMap<TypeId, Box<dyn Stored>, foldhash::fast::RandomState>;

/// The extensions of a request (or a response): at most one value of each type.
///
/// ```
/// use mcp_runtime::middleware::Extensions;
///
/// #[derive(Clone, Debug, PartialEq)]
/// struct Tenant(String);
///
/// let mut extensions = Extensions::new();
/// extensions.insert(Tenant("acme".into()));
/// assert_eq!(extensions.get::<Tenant>(), Some(&Tenant("acme".into())));
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    map: Option<Arc<Map>>,
}

impl Extensions {
    /// No extensions.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`, returning the value of its type stored before, if any.
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let map = Arc::make_mut(self.map.get_or_insert_with(Default::default));
        map.insert(TypeId::of::<T>(), Box::new(value))
            .and_then(|old| old.into_any().downcast().ok().map(|old| *old))
    }

    /// The stored value of type `T`.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .as_ref()?
            .get(&TypeId::of::<T>())
            .and_then(|value| (**value).as_any().downcast_ref())
    }

    /// The stored value of type `T`, to change it.
    pub fn get_mut<T: Send + Sync + 'static>(&mut self) -> Option<&mut T> {
        let map = Arc::make_mut(self.map.as_mut()?);
        map.get_mut(&TypeId::of::<T>())
            .and_then(|value| (**value).as_any_mut().downcast_mut())
    }

    /// Takes the stored value of type `T` out.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> Option<T> {
        let map = Arc::make_mut(self.map.as_mut()?);
        map.remove(&TypeId::of::<T>())
            .and_then(|old| old.into_any().downcast().ok().map(|old| *old))
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.map.as_ref().is_none_or(|map| map.is_empty())
    }

    /// How many values are stored.
    pub fn len(&self) -> usize {
        self.map.as_ref().map_or(0, |map| map.len())
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.len())
            .finish()
    }
}

/// A handler parameter that reads a value a middleware layer put in the request's extensions
/// ([`McpRequest::extensions_mut`](crate::middleware::McpRequest::extensions_mut)); a request
/// without one fails with a tool error naming the type (`Option<Extension<T>>` takes it when it
/// is there).
///
/// ```
/// use mcp_runtime::prelude::*;
/// use mcp_runtime::middleware::Extension;
///
/// #[derive(Clone)]
/// struct Tenant(String);
///
/// /// Who is calling?
/// #[tool]
/// async fn whoami(Extension(tenant): Extension<Tenant>) -> String {
///     tenant.0
/// }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extension<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromContext for Extension<T> {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        ctx.extensions().get::<T>().cloned().map(Extension).ok_or_else(|| {
            ContextError(format!(
                "the request carries no `{}`: a middleware layer puts it in the request's extensions",
                std::any::type_name::<T>()
            ))
        })
    }
}

impl<T: Clone + Send + Sync + 'static> FromContext for Option<Extension<T>> {
    fn from_context(ctx: &Context) -> Result<Self, ContextError> {
        Ok(ctx.extensions().get::<T>().cloned().map(Extension))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_kept_by_type_and_clones_do_not_share_changes() {
        let mut one = Extensions::new();
        assert!(one.is_empty());
        assert_eq!(one.insert(5u32), None);
        assert_eq!(one.insert(6u32), Some(5));
        one.insert("text");
        let mut two = one.clone();
        *two.get_mut::<u32>().unwrap() = 7;
        assert_eq!(one.get::<u32>(), Some(&6));
        assert_eq!(two.get::<u32>(), Some(&7));
        assert_eq!(two.remove::<&str>(), Some("text"));
        assert_eq!(one.get::<&str>(), Some(&"text"));
        assert_eq!((one.len(), two.len()), (2, 1));
        assert_eq!(one.get::<u64>(), None);
    }
}
