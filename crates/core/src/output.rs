//! What a tool returns (SPEC §2): a kind, the text a model reads, and typed data.

use serde::{Deserialize, Serialize};
use std::sync::Arc;
pub use wrench_redact::Segment;

/// The output types of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    /// Plain text.
    Text,
    /// A file's lines (`read`, `read_region`, `read_symbol`).
    Read,
    /// A program's output (bash, jobs, terminals).
    Command,
    /// A change: a summary and a unified diff.
    Edit,
    /// An image (see [`ToolOutput::images`]).
    Image,
    /// Context wrench vouches for: shown without an untrusted frame.
    TrustedContext,
    /// Content from outside (web, MCP): framed as untrusted.
    UntrustedContext,
}

/// An image returned by a tool (read of a png, jpeg, gif, webp).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// The image's media type (`image/png`, `image/jpeg`...).
    pub mime_type: String,
    /// Base64 of the bytes.
    pub data: String,
}

/// The result of one successful call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// Which output type of the contract this is.
    pub kind: OutputKind,
    /// What a model reads. Redacted (and framed, for untrusted content) by the executor.
    pub text: String,
    /// Typed structured output; every string inside is redacted by the executor.
    pub data: serde_json::Value,
    /// For untrusted content: where it came from (URL, `mcp:server/tool`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untrusted_source: Option<String>,
    /// Images the output carries (a `read` of an image file, an MCP result).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub images: Vec<Image>,
    /// Notes the engine adds (argument repairs, withheld env vars, ...).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
    /// The whole texts this output shows parts of (the file of a `read`, the
    /// stream of a command): the executor finds secrets on each source and masks
    /// the shown pieces, so a partial view hides exactly the secret bytes it holds.
    #[serde(skip)]
    pub sources: Vec<RedactionSource>,
    /// Lines wrench itself writes after untrusted content (a command's notes,
    /// exit status and spool path): the executor appends them after the frame,
    /// on a line of their own, so they are not inside it.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub epilogue: String,
    /// Where independent sections of `text` start (byte offsets of line
    /// starts, ascending): the executor's whole-text pass scans each section
    /// on its own, on the cores, and no finding joins the bytes of two
    /// sections (a grep's files: one file's lines cannot finish a secret the
    /// lines of the file before it began). Empty: the text is one section.
    #[serde(skip)]
    pub sections: Vec<usize>,
}

/// A source text and where its pieces appear in a [`ToolOutput`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RedactionSource {
    /// The whole text the shown pieces were copied from.
    pub text: Arc<str>,
    /// Pieces of [`ToolOutput::text`] copied from `text`.
    pub in_text: Vec<Segment>,
    /// Pieces of strings in [`ToolOutput::data`], by JSON pointer (`/matches/0/text`).
    pub in_data: Vec<(String, Vec<Segment>)>,
}

impl RedactionSource {
    /// A source over the whole `text`, with no pieces yet.
    pub fn new(text: impl Into<Arc<str>>) -> Self {
        RedactionSource {
            text: text.into(),
            ..Default::default()
        }
    }
    /// Bytes `view..view+len` of the output text are bytes `source..` of the source.
    pub fn text_piece(&mut self, view: usize, source: usize, len: usize) {
        if len > 0 {
            self.in_text.push(Segment { view, source, len });
        }
    }
    /// The data string at `pointer` holds bytes `source..source+len` at `view`.
    pub fn data_piece(
        &mut self,
        pointer: impl Into<String>,
        view: usize,
        source: usize,
        len: usize,
    ) {
        if len == 0 {
            return;
        }
        let pointer = pointer.into();
        let seg = Segment { view, source, len };
        match self.in_data.last_mut() {
            Some((p, v)) if *p == pointer => v.push(seg),
            _ => self.in_data.push((pointer, vec![seg])),
        }
    }
    /// True when no piece was declared (the source would mask nothing).
    pub fn is_empty(&self) -> bool {
        self.in_text.is_empty() && self.in_data.is_empty()
    }
}

impl ToolOutput {
    /// An output of `kind` with `text` and empty data.
    pub fn new(kind: OutputKind, text: impl Into<String>) -> Self {
        ToolOutput {
            kind,
            text: text.into(),
            data: serde_json::Value::Object(Default::default()),
            untrusted_source: None,
            images: Vec::new(),
            notes: Vec::new(),
            sources: Vec::new(),
            epilogue: String::new(),
            sections: Vec::new(),
        }
    }
    /// A plain-text output.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(OutputKind::Text, text)
    }
    /// External content, framed by the executor after redaction.
    pub fn untrusted(source: impl Into<String>, text: impl Into<String>) -> Self {
        let mut o = Self::new(OutputKind::UntrustedContext, text);
        o.untrusted_source = Some(source.into());
        o
    }
    /// Output of a program (bash, a background job, a terminal): `body` is what
    /// the program printed, framed by the executor as untrusted data from
    /// `source`; `epilogue` is wrench's own lines after it. An empty body gives
    /// no frame, only `(no output)`.
    pub fn command(
        source: impl Into<String>,
        body: impl Into<String>,
        epilogue: impl Into<String>,
    ) -> Self {
        let body = body.into();
        let mut o = if body.is_empty() {
            Self::new(OutputKind::Command, "(no output)")
        } else {
            let mut o = Self::new(OutputKind::Command, body);
            o.untrusted_source = Some(source.into());
            o
        };
        o.epilogue = epilogue.into();
        o
    }
    /// Attach typed data (anything serializable; an error serializing becomes null).
    pub fn with_data<T: Serialize>(mut self, data: &T) -> Self {
        self.data = serde_json::to_value(data).unwrap_or(serde_json::Value::Null);
        self
    }
    /// Attach an image.
    pub fn with_image(mut self, img: Image) -> Self {
        self.images.push(img);
        self
    }
    /// Declare a source this output shows pieces of (see [`RedactionSource`]).
    pub fn with_source(mut self, src: RedactionSource) -> Self {
        if !src.is_empty() {
            self.sources.push(src);
        }
        self
    }
    /// Add a note the engine shows after the text.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// Output-budget trailer: what was shown of how much, and how to get the rest.
pub fn trailer(shown: usize, total: Option<usize>, unit: &str, next: &str) -> String {
    match total {
        Some(t) => format!("[… shown {shown} of {t} {unit}; {next}]"),
        None => format!("[… shown {shown} {unit}, more exist; {next}]"),
    }
}
