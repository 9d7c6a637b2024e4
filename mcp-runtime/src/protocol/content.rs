//! Content blocks and the small shared types of the schema: icons, annotations, resource contents.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ProtocolVersion;

fn encode_base64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// Who a piece of content is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints about a content block or resource: audience, priority and last modification time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the content is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The theme an icon is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// For light backgrounds.
    Light,
    /// For dark backgrounds.
    Dark,
}

/// An icon for a server, tool, resource or prompt (2025-11-25). Serve it over HTTPS from the
/// server's own origin or as a `data:` URI; PNG and JPEG are what every client must display.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// The image's MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is drawn for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src`; the MIME type is guessed from a `.png`, `.jpg`, `.jpeg`, `.svg` or
    /// `.webp` ending, or read from a `data:` URI.
    pub fn new(src: impl Into<String>) -> Self {
        let src = src.into();
        let mime_type = guess_icon_mime(&src).map(str::to_owned);
        Self {
            src,
            mime_type,
            sizes: None,
            theme: None,
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the sizes, for example `["48x48", "96x96"]`.
    pub fn sizes<S: Into<String>>(mut self, sizes: impl IntoIterator<Item = S>) -> Self {
        self.sizes = Some(sizes.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the theme.
    pub fn theme(mut self, theme: IconTheme) -> Self {
        self.theme = Some(theme);
        self
    }
}

fn guess_icon_mime(src: &str) -> Option<&'static str> {
    if let Some(rest) = src.strip_prefix("data:") {
        let mime = rest.split([';', ',']).next()?;
        return [
            "image/png",
            "image/jpeg",
            "image/svg+xml",
            "image/webp",
            "image/gif",
        ]
        .into_iter()
        .find(|known| *known == mime);
    }
    let path = src.split(['?', '#']).next()?.to_ascii_lowercase();
    let ext = path.rsplit('.').next()?;
    Some(match ext {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "gif" => "image/gif",
        _ => return None,
    })
}

impl From<&str> for Icon {
    fn from(src: &str) -> Self {
        Self::new(src)
    }
}

impl From<String> for Icon {
    fn from(src: String) -> Self {
        Self::new(src)
    }
}

/// The contents of a resource: text or base64 binary, with the URI it was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents, base64-encoded.
    Blob(BlobResourceContents),
}

/// Text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// The URI that was read.
    pub uri: String,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// Binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// The URI that was read.
    pub uri: String,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Standard padded base64 of the bytes.
    pub blob: String,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        })
    }

    /// Binary contents; the bytes are base64-encoded here.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl AsRef<[u8]>,
    ) -> Self {
        Self::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: encode_base64(data.as_ref()),
            meta: None,
        })
    }

    /// The URI these contents were read from.
    pub fn uri(&self) -> &str {
        match self {
            Self::Text(text) => &text.uri,
            Self::Blob(blob) => &blob.uri,
        }
    }
}

/// A block of text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Text {
    /// The text.
    pub text: String,
    /// Audience and priority hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Text {
    /// A text block.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// An image, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Standard padded base64 of the image bytes.
    pub data: String,
    /// The MIME type, for example `image/png`.
    pub mime_type: String,
    /// Audience and priority hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Image {
    /// An image from its bytes and MIME type.
    pub fn new(data: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::from_base64(encode_base64(data.as_ref()), mime_type)
    }

    /// A PNG image from its bytes.
    pub fn png(data: impl AsRef<[u8]>) -> Self {
        Self::new(data, "image/png")
    }

    /// An image whose bytes are already base64-encoded.
    pub fn from_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A piece of audio, base64-encoded (2025-03-26).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Audio {
    /// Standard padded base64 of the audio bytes.
    pub data: String,
    /// The MIME type, for example `audio/wav`.
    pub mime_type: String,
    /// Audience and priority hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Audio {
    /// Audio from its bytes and MIME type.
    pub fn new(data: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Self::from_base64(encode_base64(data.as_ref()), mime_type)
    }

    /// Audio whose bytes are already base64-encoded.
    pub fn from_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// The MCP `Resource` object: a concrete resource as `resources/list` shows it, and, as a
/// content block, a link to a resource the client may read (2025-06-18). One type serves both,
/// so the two cannot drift; [`ResourceInfo`](crate::resource::ResourceInfo) names it too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// The resource's name.
    pub name: String,
    /// A display name (2025-06-18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes, before any base64 encoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Audience, priority and last-modified hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl ResourceLink {
    /// A resource (or a link to one) at `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The members `version` has no field for, dropped: titles before 2025-06-18, icons before
    /// 2025-11-25, `_meta` and `lastModified` before 2025-06-18.
    pub(crate) fn shaped_for(mut self, version: ProtocolVersion) -> Self {
        if !version.has_titles() {
            self.title = None;
        }
        if !version.has_icons() {
            self.icons = None;
        }
        if !version.has_structured_output() {
            self.meta = None;
            if let Some(annotations) = &mut self.annotations {
                annotations.last_modified = None;
            }
        }
        self
    }
}

/// A resource's contents embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Audience and priority hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl EmbeddedResource {
    /// Embeds these contents.
    pub fn new(resource: ResourceContents) -> Self {
        Self {
            resource,
            annotations: None,
            meta: None,
        }
    }

    /// Embeds a text resource.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::new(ResourceContents::text(uri, mime_type, text))
    }

    /// Embeds a binary resource.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl AsRef<[u8]>,
    ) -> Self {
        Self::new(ResourceContents::blob(uri, mime_type, data))
    }
}

/// One content block of a tool result or prompt message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// `{"type": "text"}`
    Text(Text),
    /// `{"type": "image"}`
    Image(Image),
    /// `{"type": "audio"}` (2025-03-26)
    Audio(Audio),
    /// `{"type": "resource_link"}` (2025-06-18)
    ResourceLink(ResourceLink),
    /// `{"type": "resource"}`
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(Text::new(text))
    }

    /// The block as a revision can carry it: an audio block before 2025-03-26 and a resource link
    /// before 2025-06-18 have no wire form there, so they become a text block that says what
    /// they were.
    pub fn for_version(self, version: ProtocolVersion) -> Self {
        match self {
            Self::Audio(audio) if version < ProtocolVersion::V2025_03_26 => Self::text(format!(
                "[audio content ({}) is not supported by protocol {version}]",
                audio.mime_type
            )),
            Self::ResourceLink(link) if version < ProtocolVersion::V2025_06_18 => {
                Self::text(format!("resource: {}", link.uri))
            }
            // A link shares the `Resource` object, so its icons wait for the revision with icons.
            Self::ResourceLink(link) if link.icons.is_some() && !version.has_icons() => {
                Self::ResourceLink(ResourceLink {
                    icons: None,
                    ..link
                })
            }
            other => other,
        }
    }
}

macro_rules! content_from {
    ($($ty:ident => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for Content {
            fn from(block: $ty) -> Self {
                Self::$variant(block)
            }
        }
    )*};
}

content_from!(Text => Text, Image => Image, Audio => Audio, ResourceLink => ResourceLink, EmbeddedResource => Resource);

impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialize_with_their_wire_type() {
        let blocks = vec![
            Content::text("hi"),
            Image::png([1, 2, 3]).into(),
            Audio::new([0], "audio/wav").into(),
            ResourceLink::new("file:///a", "a").into(),
            EmbeddedResource::text("test://x", "text/plain", "body").into(),
        ];
        assert_eq!(
            serde_json::to_value(&blocks).unwrap(),
            json!([
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AQID", "mimeType": "image/png"},
                {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a", "name": "a"},
                {"type": "resource", "resource": {"uri": "test://x", "mimeType": "text/plain", "text": "body"}},
            ])
        );
    }

    #[test]
    fn icon_mime_types_are_guessed() {
        assert_eq!(
            Icon::new("https://x.test/a.PNG?v=1").mime_type.as_deref(),
            Some("image/png")
        );
        assert_eq!(
            Icon::new("data:image/svg+xml;base64,AAAA")
                .mime_type
                .as_deref(),
            Some("image/svg+xml")
        );
        assert_eq!(Icon::new("https://x.test/icon").mime_type, None);
    }

    #[test]
    fn newer_blocks_degrade_to_text_for_older_revisions() {
        let link = Content::from(ResourceLink::new("file:///a", "a"));
        assert_eq!(
            link.clone().for_version(ProtocolVersion::V2025_03_26),
            Content::text("resource: file:///a")
        );
        assert_eq!(link.clone().for_version(ProtocolVersion::V2025_06_18), link);
    }

    #[test]
    fn link_icons_wait_for_the_revision_with_icons() {
        let mut link = ResourceLink::new("file:///a", "a");
        link.icons = Some(vec![Icon::new("https://example.com/a.png")]);
        let block = Content::ResourceLink(link.clone());
        assert_eq!(
            block.clone().for_version(ProtocolVersion::V2025_06_18),
            Content::ResourceLink(ResourceLink {
                icons: None,
                ..link.clone()
            })
        );
        assert_eq!(
            block.for_version(ProtocolVersion::V2025_11_25),
            Content::ResourceLink(link)
        );
    }
}
