//! The keys each attribute accepts, one enum per attribute, in the order error messages list
//! them.
//!
//! Parsing looks a key up in its enum's table and hands the variant on, so each attribute's
//! `match` names every key it accepts and has no catch-all arm for an unknown one to fall into.

/// The keys of one attribute.
pub(crate) trait Key: Copy + PartialEq + 'static {
    /// Every key with its spelling, in the order error messages list them.
    const ALL: &'static [(&'static str, Self)];

    /// Whether the key may be given more than once (each occurrence adds a value).
    fn repeatable(self) -> bool;

    /// The key as written.
    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, key)| *key == self)
            .map_or("", |(text, _)| text)
    }
}

/// Defines a key enum and its [`Key`] table.
macro_rules! keys {
    (
        $(#[$doc:meta])*
        $name:ident { $($variant:ident = $text:literal),* $(,)? }
        $(repeatable: $($repeat:ident),+)?
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub(crate) enum $name {
            $($variant),*
        }

        impl Key for $name {
            const ALL: &'static [(&'static str, Self)] = &[$(($text, Self::$variant)),*];

            fn repeatable(self) -> bool {
                false $($(|| self == Self::$repeat)+)?
            }
        }
    };
}

keys! {
    /// `#[tool(..)]`.
    ToolKey {
        Name = "name",
        Title = "title",
        Description = "description",
        ReadOnly = "read_only",
        Destructive = "destructive",
        Idempotent = "idempotent",
        OpenWorld = "open_world",
        Icons = "icons",
        Scopes = "scopes",
        Meta = "meta",
        Inline = "inline",
        Ui = "ui",
        Task = "task",
        Layer = "layer",
        Crate = "crate",
    }
}

keys! {
    /// `#[resource("uri", ..)]`, after the URI.
    ResourceKey {
        Name = "name",
        Title = "title",
        Description = "description",
        MimeType = "mime_type",
        Size = "size",
        Audience = "audience",
        Priority = "priority",
        LastModified = "last_modified",
        Icons = "icons",
        Scopes = "scopes",
        Meta = "meta",
        List = "list",
        AllowTraversal = "allow_traversal",
        Layer = "layer",
        Crate = "crate",
    }
}

keys! {
    /// `#[prompt(..)]`.
    PromptKey {
        Name = "name",
        Title = "title",
        Description = "description",
        Icons = "icons",
        Scopes = "scopes",
        Meta = "meta",
        Layer = "layer",
        Crate = "crate",
    }
}

keys! {
    /// `#[server(..)]`.
    ServerKey {
        Name = "name",
        Version = "version",
        Title = "title",
        Description = "description",
        Instructions = "instructions",
        WebsiteUrl = "website_url",
        Icons = "icons",
        Scopes = "scopes",
        Crate = "crate",
    }
}

keys! {
    /// `#[arg(..)]` on a parameter; `example` may be given once per example.
    ArgKey {
        Rename = "rename",
        Description = "description",
        Default = "default",
        Example = "example",
        Complete = "complete",
        Header = "header",
    }
    repeatable: Example
}

keys! {
    /// `#[elicit(..)]` on a field of a form.
    ElicitFieldKey {
        Rename = "rename",
        Title = "title",
        Description = "description",
        MinLength = "min_length",
        MaxLength = "max_length",
        Format = "format",
        Minimum = "minimum",
        Maximum = "maximum",
        Default = "default",
        MinItems = "min_items",
        MaxItems = "max_items",
    }
}

keys! {
    /// `#[elicit(..)]` on a variant of a choice.
    ElicitVariantKey {
        Rename = "rename",
        Title = "title",
    }
}

keys! {
    /// `#[elicit(..)]` on a choice enum.
    ElicitEnumKey {
        EnumNames = "enum_names",
    }
}

/// "`a`, `b`, `c`": the keys of `K`, for an error message.
pub(crate) fn list<K: Key>() -> String {
    K::ALL
        .iter()
        .map(|(k, _)| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(feature = "openapi")]
keys! {
    /// `openapi!("file", ..)`, after the file.
    OpenapiKey {
        IncludeTags = "include_tags",
        ExcludeTags = "exclude_tags",
        IncludePaths = "include_paths",
        ExcludePaths = "exclude_paths",
        IncludeOperations = "include_operations",
        ExcludeOperations = "exclude_operations",
        Prefix = "prefix",
        Rename = "rename",
        Replace = "replace",
        OutputSchemas = "output_schemas",
        Crate = "crate",
    }
}
