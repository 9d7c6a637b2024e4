//! A message's `params`, and a `tools/call`'s `arguments`, as read from the wire: their members
//! in a list, compared by name.
//!
//! A request's params and a tool's arguments have a few members each, and every one is read by
//! name once or twice. serde_json's map keeps the order with an index hashed by SipHash: two
//! allocations per object and a hash for every member inserted and every lookup. A list of a
//! few members costs one allocation, and comparing a few short names costs less than hashing
//! one. Past [`LISTED`] members an object is a map, so a client that sends thousands costs
//! each lookup one hash, not a scan.

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The most members an object keeps in a list; one with more becomes a map.
pub(crate) const LISTED: usize = 16;

/// The longest name a [`Name`] holds in place.
const SHORT: usize = 22;

/// A member's name: held in place when it is short, as nearly every name is, and on the heap
/// when not (a name read from a message would otherwise cost an allocation each).
#[derive(Clone)]
pub(crate) enum Name {
    /// The length, and the bytes (UTF-8: made from a `str`).
    Short(u8, [u8; SHORT]),
    Long(String),
}

impl Name {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Short(len, bytes) => bytes
                .get(..usize::from(*len))
                .and_then(|bytes| std::str::from_utf8(bytes).ok())
                .unwrap_or_default(),
            Self::Long(name) => name,
        }
    }

    fn into_string(self) -> String {
        match self {
            Self::Short(..) => self.as_str().to_owned(),
            Self::Long(name) => name,
        }
    }

    pub(crate) fn is(&self, name: &str) -> bool {
        match self {
            Self::Short(len, bytes) => bytes.get(..usize::from(*len)) == Some(name.as_bytes()),
            Self::Long(own) => own == name,
        }
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Name {
    fn from(name: &str) -> Self {
        let mut bytes = [0; SHORT];
        match (u8::try_from(name.len()), bytes.get_mut(..name.len())) {
            (Ok(len), Some(place)) => {
                place.copy_from_slice(name.as_bytes());
                Self::Short(len, bytes)
            }
            _ => Self::Long(name.to_owned()),
        }
    }
}

impl From<String> for Name {
    fn from(name: String) -> Self {
        match name.len() <= SHORT {
            true => Self::from(name.as_str()),
            false => Self::Long(name),
        }
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Chars;
        impl Visitor<'_> for Chars {
            type Value = Name;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_str<E>(self, name: &str) -> Result<Name, E> {
                Ok(Name::from(name))
            }

            fn visit_string<E>(self, name: String) -> Result<Name, E> {
                Ok(Name::from(name))
            }
        }
        deserializer.deserialize_string(Chars)
    }
}

/// A JSON object's members, in the order they came (a repeated name keeps its first place and
/// its last value, as in serde_json's map).
#[derive(Clone)]
pub(crate) enum Object {
    /// At most [`LISTED`] members.
    List(Vec<(Name, Value)>),
    /// More (boxed: an object is moved with its message, and most are lists).
    Map(Box<Map<String, Value>>),
}

impl Default for Object {
    fn default() -> Self {
        Self::List(Vec::new())
    }
}

impl Object {
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::List(list) => list.len(),
            Self::Map(map) => map.len(),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Self::List(list) => list.iter().find(|(name, _)| name.is(key)).map(|(_, v)| v),
            Self::Map(map) => map.get(key),
        }
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<Value> {
        match self {
            Self::List(list) => {
                let at = list.iter().position(|(name, _)| name.is(key))?;
                Some(list.remove(at).1)
            }
            Self::Map(map) => map.shift_remove(key),
        }
    }

    /// Adds a member; one already there keeps its place and takes the new value.
    pub(crate) fn insert(&mut self, key: impl Into<Name> + AsRef<str>, value: Value) {
        match self {
            Self::List(list) => {
                if let Some((_, slot)) = list.iter_mut().find(|(name, _)| name.is(key.as_ref())) {
                    *slot = value;
                } else if list.len() < LISTED {
                    list.push((key.into(), value));
                } else {
                    let mut map = std::mem::take(self).into_map();
                    map.insert(key.into().into_string(), value);
                    *self = Self::Map(Box::new(map));
                }
            }
            Self::Map(map) => {
                map.insert(key.into().into_string(), value);
            }
        }
    }

    /// The members in order.
    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = (&str, &Value)> + '_> {
        match self {
            Self::List(list) => Box::new(list.iter().map(|(k, v)| (k.as_str(), v))),
            Self::Map(map) => Box::new(map.iter().map(|(k, v)| (k.as_str(), v))),
        }
    }

    /// Keeps the members `keep` says yes to, in order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str, &mut Value) -> bool) {
        match self {
            Self::List(list) => list.retain_mut(|(k, v)| keep(k.as_str(), v)),
            Self::Map(map) => map.retain(|k, v| keep(k, v)),
        }
    }

    pub(crate) fn into_map(self) -> Map<String, Value> {
        match self {
            Self::List(list) => list
                .into_iter()
                .map(|(k, v)| (k.into_string(), v))
                .collect(),
            Self::Map(map) => *map,
        }
    }
}

impl From<Map<String, Value>> for Object {
    fn from(map: Map<String, Value>) -> Self {
        if map.len() <= LISTED {
            Self::List(map.into_iter().map(|(k, v)| (Name::from(k), v)).collect())
        } else {
            Self::Map(Box::new(map))
        }
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// The `name` under which [`Params`] keeps an object `arguments` apart.
const ARGUMENTS: &str = "arguments";

/// A request's or notification's params (absent params are empty): its members, and an
/// `arguments` that is an object kept apart as its own members, for a tool's parameters to take
/// one by one. (Small: it is moved with its message, several times.)
#[derive(Clone, Default)]
pub struct Params {
    members: Object,
    /// An object `arguments`.
    arguments: Option<Object>,
    /// `arguments` as a value, made when something asks for it as one.
    arguments_value: OnceLock<Box<Value>>,
}

impl Params {
    /// Empty params.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// How many members.
    pub(crate) fn len(&self) -> usize {
        self.members.len() + usize::from(self.arguments.is_some())
    }

    /// The member `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match key == ARGUMENTS {
            true => self.arguments_value().or_else(|| self.members.get(key)),
            false => self.members.get(key),
        }
    }

    /// An object `arguments` as a value.
    fn arguments_value(&self) -> Option<&Value> {
        let arguments = self.arguments.as_ref()?;
        let value = self
            .arguments_value
            .get_or_init(|| Box::new(Value::Object(arguments.clone().into_map())));
        Some(value)
    }

    /// An object `arguments` taken out, as a value.
    fn take_arguments_value(&mut self) -> Option<Value> {
        let arguments = self.arguments.take()?;
        Some(match self.arguments_value.take() {
            Some(value) => *value,
            None => Value::Object(arguments.into_map()),
        })
    }

    /// Takes the member `key` out.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Value> {
        match key == ARGUMENTS && self.arguments.is_some() {
            true => self.take_arguments_value(),
            false => self.members.remove(key),
        }
    }

    /// Sets the member `key`.
    pub(crate) fn insert(&mut self, key: String, value: Value) {
        if key == ARGUMENTS {
            self.take_arguments_value();
        }
        self.members.insert(key, value);
    }

    /// The members (an object `arguments` last).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        let arguments = self.arguments_value().map(|value| (ARGUMENTS, value));
        self.members.iter().chain(arguments)
    }

    /// `arguments`, taken out: its members when it is an object, else the value it is.
    pub(crate) fn take_arguments(&mut self) -> Option<Result<Object, Value>> {
        self.arguments_value.take();
        match self.arguments.take() {
            Some(arguments) => Some(Ok(arguments)),
            None => self.members.remove(ARGUMENTS).map(|value| match value {
                Value::Object(map) => Ok(Object::from(map)),
                other => Err(other),
            }),
        }
    }

    /// The params as serde_json's map, made so once: what middleware reads and changes.
    pub(crate) fn make_map(&mut self) -> &mut Map<String, Value> {
        if self.arguments.is_some() || matches!(self.members, Object::List(_)) {
            let map = std::mem::take(self).into_map();
            self.members = Object::Map(Box::new(map));
        }
        match &mut self.members {
            Object::Map(map) => map,
            Object::List(_) => unreachable!("made a map above"),
        }
    }

    /// The params as serde_json's map, when [`make_map`](Self::make_map) made them one.
    pub(crate) fn as_map(&self) -> Option<&Map<String, Value>> {
        match (&self.members, &self.arguments) {
            (Object::Map(map), None) => Some(map),
            _ => None,
        }
    }

    /// The params as a map (an object `arguments` last).
    pub(crate) fn into_map(mut self) -> Map<String, Value> {
        let arguments = self.take_arguments_value();
        let mut map = self.members.into_map();
        if let Some(arguments) = arguments {
            map.insert(ARGUMENTS.to_owned(), arguments);
        }
        map
    }
}

impl From<Map<String, Value>> for Params {
    fn from(map: Map<String, Value>) -> Self {
        Self {
            members: Object::from(map),
            ..Self::default()
        }
    }
}

impl From<Params> for Map<String, Value> {
    fn from(params: Params) -> Self {
        params.into_map()
    }
}

impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl fmt::Debug for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Params read by member name: [`Params`], or serde_json's map (which tests and the general
/// path hand in).
pub(crate) trait Members {
    /// The member `key`.
    fn get(&self, key: &str) -> Option<&Value>;
}

impl Members for Params {
    fn get(&self, key: &str) -> Option<&Value> {
        Params::get(self, key)
    }
}

impl Members for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
}

/// A JSON value read as serde_json reads a `Value` (every string, number and nested value
/// checked alike), except that an object is read by `T` from its members. A message's `params`
/// member is a `Read<Params>`; anything but an object is not valid params, and the caller says
/// so.
pub(crate) enum Read<T> {
    Object(T),
    Other(Value),
}

/// What a message's `params` member holds.
pub(crate) type ParamsIn = Read<Params>;

/// Something read from the members of a JSON object.
trait FromMembers: Sized {
    fn read<'de, A: MapAccess<'de>>(access: A) -> Result<Self, A::Error>;
}

impl FromMembers for Object {
    fn read<'de, A: MapAccess<'de>>(mut access: A) -> Result<Self, A::Error> {
        let mut object = Object::default();
        while let Some(key) = access.next_key::<Name>()? {
            let value = access.next_value::<Value>()?;
            object.insert(key, value);
        }
        Ok(object)
    }
}

impl FromMembers for Params {
    fn read<'de, A: MapAccess<'de>>(mut access: A) -> Result<Self, A::Error> {
        let mut params = Params::new();
        while let Some(key) = access.next_key::<Name>()? {
            if !key.is(ARGUMENTS) {
                let value = access.next_value::<Value>()?;
                params.members.insert(key, value);
                continue;
            }
            // An object is kept apart as its members; anything else is a member like the rest.
            // (A repeated `arguments`: the last one counts.)
            match access.next_value::<Read<Object>>()? {
                Read::Object(arguments) => {
                    params.members.remove(ARGUMENTS);
                    params.arguments = Some(arguments);
                }
                Read::Other(value) => params.insert(ARGUMENTS.to_owned(), value),
            }
        }
        Ok(params)
    }
}

impl<'de, T: FromMembers> Deserialize<'de> for Read<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ReadVisitor(PhantomData))
    }
}

struct ReadVisitor<T>(PhantomData<T>);

impl<'de, T: FromMembers> Visitor<'de> for ReadVisitor<T> {
    type Value = Read<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Read<T>, A::Error> {
        T::read(access).map(Read::Object)
    }

    fn visit_bool<E>(self, value: bool) -> Result<Read<T>, E> {
        Ok(Read::Other(Value::Bool(value)))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Read<T>, E> {
        Ok(Read::Other(Value::Number(value.into())))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Read<T>, E> {
        Ok(Read::Other(Value::Number(value.into())))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Read<T>, E> {
        Ok(Read::Other(
            Number::from_f64(value).map_or(Value::Null, Value::Number),
        ))
    }

    fn visit_str<E>(self, value: &str) -> Result<Read<T>, E> {
        Ok(Read::Other(Value::String(value.to_owned())))
    }

    fn visit_string<E>(self, value: String) -> Result<Read<T>, E> {
        Ok(Read::Other(Value::String(value)))
    }

    fn visit_unit<E>(self) -> Result<Read<T>, E> {
        Ok(Read::Other(Value::Null))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Read<T>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Read::Other(Value::Array(items)))
    }
}

impl From<Value> for ParamsIn {
    fn from(value: Value) -> Self {
        match value {
            Value::Object(map) => Self::Object(Params::from(map)),
            other => Self::Other(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Params {
        match serde_json::from_str::<ParamsIn>(text).unwrap() {
            ParamsIn::Object(params) => params,
            ParamsIn::Other(value) => panic!("not an object: {value}"),
        }
    }

    #[test]
    fn params_read_as_members_are_the_map_they_parse_to() {
        for text in [
            r#"{"name":"add","arguments":{"a":1,"b":[2,"x\"y"]},"other":null,"name":"sub"}"#,
            r#"{"arguments":{"a":1,"a":2},"arguments":{"b":3}}"#,
            r#"{"arguments":{"a":1},"arguments":7}"#,
            r#"{"arguments":5,"arguments":{"c":{"d":1}}}"#,
            r#"{"arguments":{"arguments":{"x":1}}}"#,
            r#"{}"#,
        ] {
            let expected: Map<String, Value> = serde_json::from_str(text).unwrap();
            let params = read(text);
            assert_eq!(params, Params::from(expected.clone()), "{text}");
            assert_eq!(params.len(), expected.len(), "{text}");
            for (key, value) in &expected {
                assert_eq!(params.get(key), Some(value), "{text}");
            }
            assert_eq!(
                Value::Object(params.into_map()),
                Value::Object(expected),
                "{text}"
            );
        }
    }

    #[test]
    fn an_object_arguments_is_taken_as_its_members() {
        let mut params = read(r#"{"name":"add","arguments":{"a":1,"b":2}}"#);
        assert!(params.arguments.is_some());
        let arguments = params.take_arguments().unwrap().unwrap();
        assert_eq!(arguments.get("b"), Some(&json!(2)));
        assert!(params.get("arguments").is_none());
        assert_eq!(params.get("name"), Some(&json!("add")));

        let mut params = read(r#"{"arguments":[1]}"#);
        assert_eq!(params.take_arguments(), Some(Err(json!([1]))));
    }

    #[test]
    fn more_members_than_a_list_holds_make_a_map() {
        let mut object = Object::default();
        for n in 0..=LISTED {
            object.insert(format!("k{n}"), json!(n));
        }
        assert!(matches!(object, Object::Map(_)));
        assert_eq!(object.len(), LISTED + 1);
        assert_eq!(object.get("k3"), Some(&json!(3)));
        object.insert("k3".to_owned(), json!("again"));
        assert_eq!(object.iter().nth(3), Some(("k3", &json!("again"))));
    }

    #[test]
    fn changing_params_changes_what_they_read() {
        let mut params = read(r#"{"name":"add","arguments":{"a":1}}"#);
        params.insert("arguments".into(), json!({"z": 0}));
        assert_eq!(params.get("arguments"), Some(&json!({"z": 0})));
        assert_eq!(params.remove("arguments"), Some(json!({"z": 0})));
        assert_eq!(params.len(), 1);
        assert_eq!(
            serde_json::from_str::<ParamsIn>("[1]")
                .ok()
                .map(|p| matches!(p, ParamsIn::Other(_))),
            Some(true)
        );
    }
}
