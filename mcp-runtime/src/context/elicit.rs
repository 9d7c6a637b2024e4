//! The restricted form schema of elicitation: flat objects of primitive fields.
//!
//! `#[derive(Elicit)]` on a struct builds its `requestedSchema` from its fields, each through
//! [`ElicitField`]; a field type the form cannot express (a nested struct, a map) does not
//! implement it, and the derive fails to compile at that field. On a fieldless enum the derive
//! makes a single-select field (and `Vec<Enum>` a multi-select one), titled when any variant has
//! `#[elicit(title = "..")]`.

use serde_json::{Map, Value, json};

/// A type that can be one field of an elicitation form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a string, number, integer, boolean or enum",
    note = "an elicitation form is flat: its fields are `String`, integers, `f32`/`f64`, `bool`, fieldless enums with `#[derive(Elicit)]`, a `Vec` of such an enum (multi-select), or an `Option` of one of these",
    note = "ask for a nested value with a second form, or flatten it into this one"
)]
pub trait ElicitField {
    /// Whether the form requires the field (`Option` fields are not required).
    const REQUIRED: bool = true;
    /// The field's primitive schema.
    fn field_schema() -> Map<String, Value>;
}

/// A fieldless enum whose values a user picks from; `#[derive(Elicit)]` implements it.
pub trait ElicitEnum {
    /// Whether titles go in the legacy `enumNames` list (`#[elicit(enum_names)]`), the only
    /// titled form clients before 2025-11-25 know, instead of `oneOf`.
    const ENUM_NAMES: bool = false;

    /// Each variant's wire value and, when it has one, its title.
    fn options() -> Vec<(&'static str, Option<&'static str>)>;
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

impl ElicitField for String {
    fn field_schema() -> Map<String, Value> {
        object(json!({"type": "string"}))
    }
}

impl ElicitField for bool {
    fn field_schema() -> Map<String, Value> {
        object(json!({"type": "boolean"}))
    }
}

macro_rules! integers {
    ($($ty:ty => $min:expr),*) => {$(
        impl ElicitField for $ty {
            fn field_schema() -> Map<String, Value> {
                let mut schema = object(json!({"type": "integer"}));
                if let Some(min) = $min {
                    schema.insert("minimum".into(), Value::from(min));
                }
                schema
            }
        }
    )*};
}

integers!(
    i8 => None::<i64>, i16 => None::<i64>, i32 => None::<i64>, i64 => None::<i64>, isize => None::<i64>,
    u8 => Some(0), u16 => Some(0), u32 => Some(0), u64 => Some(0), usize => Some(0)
);

impl ElicitField for f32 {
    fn field_schema() -> Map<String, Value> {
        object(json!({"type": "number"}))
    }
}

impl ElicitField for f64 {
    fn field_schema() -> Map<String, Value> {
        object(json!({"type": "number"}))
    }
}

impl<T: ElicitField> ElicitField for Option<T> {
    const REQUIRED: bool = false;
    fn field_schema() -> Map<String, Value> {
        T::field_schema()
    }
}

/// A multi-select of enum values.
impl<T: ElicitEnum> ElicitField for Vec<T> {
    fn field_schema() -> Map<String, Value> {
        let options = T::options();
        let items = if options.iter().any(|(_, title)| title.is_some()) {
            let any_of: Vec<Value> = options
                .iter()
                .map(|(value, title)| json!({"const": value, "title": title.unwrap_or(value)}))
                .collect();
            json!({"anyOf": any_of})
        } else {
            let values: Vec<&str> = options.iter().map(|(value, _)| *value).collect();
            json!({"type": "string", "enum": values})
        };
        object(json!({"type": "array", "items": items}))
    }
}

/// The single-select schema of an enum: `enum`, or `oneOf` of `const`/`title` when titled.
pub fn enum_schema<T: ElicitEnum>() -> Map<String, Value> {
    let options = T::options();
    if T::ENUM_NAMES {
        let values: Vec<&str> = options.iter().map(|(value, _)| *value).collect();
        let names: Vec<&str> = options
            .iter()
            .map(|(value, title)| title.unwrap_or(value))
            .collect();
        return object(json!({"type": "string", "enum": values, "enumNames": names}));
    }
    if options.iter().any(|(_, title)| title.is_some()) {
        let one_of: Vec<Value> = options
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title.unwrap_or(value)}))
            .collect();
        object(json!({"type": "string", "oneOf": one_of}))
    } else {
        let values: Vec<&str> = options.iter().map(|(value, _)| *value).collect();
        object(json!({"type": "string", "enum": values}))
    }
}

/// Assembles a form's `requestedSchema`.
pub fn form_schema(
    properties: Vec<(&'static str, Map<String, Value>, bool)>,
) -> Map<String, Value> {
    let required: Vec<&str> = properties
        .iter()
        .filter(|(_, _, required)| *required)
        .map(|(name, _, _)| *name)
        .collect();
    let properties: Map<String, Value> = properties
        .into_iter()
        .map(|(name, schema, _)| (name.to_owned(), Value::Object(schema)))
        .collect();
    let mut schema = object(json!({"type": "object", "properties": properties}));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema
}
