//! `notebook_edit` {path, cell_number? | cell_id?, new_source?, cell_type?,
//! edit_mode?}: replace, insert or delete one cell of a Jupyter notebook,
//! keeping it valid nbformat 4.x and its JSON formatting (key order and
//! indentation), so the diff shows only the cell that changed.

use crate::common::{TextChange, change_file, plan_write, write_access};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wrench_core::{
    Access, ActionPlan, Authorized, Context, Effect, Risk, Tool, ToolError, ToolOutput, ToolResult,
    ToolSpec,
};

/// Which change `notebook_edit` makes: `replace` the cell's source (the
/// default), `insert` a new cell, or `delete` the cell.
// Variants have no doc comments on purpose: schemars would turn the
// schema's `enum` of names into a `oneOf` of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

/// A Jupyter cell type: `code`, `markdown` or `raw`.
// Variants have no doc comments on purpose: schemars would turn the
// schema's `enum` of names into a `oneOf` of described constants.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Code,
    Markdown,
    Raw,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
            CellType::Raw => "raw",
        }
    }
}

/// Arguments of `notebook_edit`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct NotebookEditArgs {
    /// The .ipynb file, relative to the workspace root.
    #[serde(alias = "notebook_path", alias = "file_path")]
    pub path: String,
    /// 0-based cell index (insert: the new cell goes before this index; past the end appends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_number: Option<usize>,
    /// Cell id (insert: the new cell goes after this cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_id: Option<String>,
    /// The new source of the cell (replace, insert).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_source: Option<String>,
    /// Cell type (required for insert; on replace, changes the type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_type: Option<CellType>,
    /// replace the cell's source (default), insert a new cell, or delete the cell.
    #[serde(default)]
    pub edit_mode: EditMode,
    /// Validate everything the call checks (permissions, read-before-write, matching) and return the diff it would write, writing nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The indentation the notebook's JSON uses (Jupyter writes one space).
fn detect_indent(text: &str) -> String {
    text.lines()
        .nth(1)
        .map(|l| l[..l.len() - l.trim_start().len()].to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| " ".to_string())
}

/// Source as nbformat stores it: a list of lines, each but the last ending in `\n`.
fn source_lines(s: &str) -> Value {
    let mut v = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find('\n') {
        v.push(Value::String(rest[..=i].to_string()));
        rest = &rest[i + 1..];
    }
    if !rest.is_empty() {
        v.push(Value::String(rest.to_string()));
    }
    Value::Array(v)
}

fn source_like(old: Option<&Value>, s: &str) -> Value {
    match old {
        Some(Value::String(_)) => Value::String(s.to_string()),
        _ => source_lines(s),
    }
}

fn new_id() -> String {
    let mut b = [0u8; 4];
    if getrandom::fill(&mut b).is_err() {
        b = std::process::id().to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn set_type(cell: &mut Map<String, Value>, t: CellType) {
    cell.insert("cell_type".into(), json!(t.as_str()));
    if t == CellType::Code {
        cell.entry("execution_count").or_insert(Value::Null);
        cell.entry("outputs").or_insert(json!([]));
    } else {
        cell.remove("execution_count");
        cell.remove("outputs");
    }
}

/// Apply the edit to the notebook text.
pub fn edit_notebook(text: &str, a: &NotebookEditArgs, shown: &str) -> ToolResult<TextChange> {
    let mut nb: Value = serde_json::from_str(text).map_err(|e| {
        ToolError::invalid_args(format!(
            "{shown} is not valid notebook JSON ({e}); fix it with edit or write"
        ))
    })?;
    let major = nb.get("nbformat").and_then(Value::as_u64).unwrap_or(0);
    let minor = nb
        .get("nbformat_minor")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if major != 4 {
        return Err(ToolError::unsupported(format!(
            "{shown} is nbformat {major}; notebook_edit edits nbformat 4 notebooks (convert with `jupyter nbconvert --to notebook`)"
        )));
    }
    let Some(cells) = nb.get_mut("cells").and_then(Value::as_array_mut) else {
        return Err(ToolError::invalid_args(format!(
            "{shown} has no `cells` list"
        )));
    };
    let by_id = |cells: &[Value], id: &str| {
        cells
            .iter()
            .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
    };
    let idx = match (&a.cell_id, a.cell_number) {
        (Some(id), _) => Some(by_id(cells, id).ok_or_else(|| {
            ToolError::not_found(format!(
                "{shown} has no cell with id {id:?}; read the notebook to see the ids"
            ))
        })?),
        (None, Some(n)) => Some(n),
        (None, None) => None,
    };
    let detail;
    match a.edit_mode {
        EditMode::Insert => {
            let t = a.cell_type.ok_or_else(|| {
                ToolError::invalid_args("insert needs cell_type (code, markdown or raw)")
            })?;
            let src = a.new_source.as_deref().unwrap_or("");
            let at = match (&a.cell_id, idx) {
                (Some(_), Some(i)) => i + 1,
                (None, Some(n)) => n.min(cells.len()),
                _ => 0,
            };
            let mut cell = Map::new();
            cell.insert("cell_type".into(), json!(t.as_str()));
            if t == CellType::Code {
                cell.insert("execution_count".into(), Value::Null);
            }
            // Ids exist from nbformat 4.5 on; adding one to an older notebook would make it invalid.
            if minor >= 5 {
                cell.insert("id".into(), json!(new_id()));
            }
            cell.insert("metadata".into(), json!({}));
            if t == CellType::Code {
                cell.insert("outputs".into(), json!([]));
            }
            cell.insert("source".into(), source_lines(src));
            cells.insert(at, Value::Object(cell));
            detail = format!("inserted a {} cell at index {at}", t.as_str());
        }
        EditMode::Delete | EditMode::Replace => {
            let i = idx.ok_or_else(|| {
                ToolError::invalid_args("pass cell_number or cell_id to say which cell")
            })?;
            if i >= cells.len() {
                return Err(ToolError::not_found(format!(
                    "{shown} has {} cell(s) (0-based indexes 0-{}); there is no cell {i}",
                    cells.len(),
                    cells.len().saturating_sub(1)
                )));
            }
            if a.edit_mode == EditMode::Delete {
                cells.remove(i);
                detail = format!("deleted cell {i}");
            } else {
                let src = a
                    .new_source
                    .as_deref()
                    .ok_or_else(|| ToolError::invalid_args("replace needs new_source"))?;
                let Some(cell) = cells[i].as_object_mut() else {
                    return Err(ToolError::invalid_args(format!(
                        "cell {i} of {shown} is not an object"
                    )));
                };
                let new_src = source_like(cell.get("source"), src);
                cell.insert("source".into(), new_src);
                if let Some(t) = a.cell_type {
                    set_type(cell, t);
                }
                if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
                    cell.insert("execution_count".into(), Value::Null);
                    cell.insert("outputs".into(), json!([]));
                }
                detail = format!("replaced the source of cell {i}");
            }
        }
    }
    let indent = detect_indent(text);
    let mut buf = Vec::new();
    let fmt = NotebookFormatter {
        pretty: serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes()),
        // A notebook written all in ASCII (Python's `ensure_ascii`) keeps
        // its `\u00e9` escapes, in the cells not touched too.
        ascii: text.is_ascii(),
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    nb.serialize(&mut ser)
        .map_err(|e| ToolError::io(format!("cannot write the notebook JSON: {e}")))?;
    let mut out =
        String::from_utf8(buf).map_err(|_| ToolError::io("notebook JSON is not UTF-8"))?;
    if text.ends_with('\n') {
        out.push('\n');
    }
    Ok(TextChange {
        text: out,
        detail,
        tier: None,
        adapted: Vec::new(),
    })
}

/// The notebook's own JSON style: its indentation, and `\uXXXX` escapes
/// (lowercase, UTF-16 pairs beyond the BMP, as Python writes them) for
/// every non-ASCII character when the file was all ASCII.
struct NotebookFormatter<'a> {
    pretty: serde_json::ser::PrettyFormatter<'a>,
    ascii: bool,
}

impl serde_json::ser::Formatter for NotebookFormatter<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        if !self.ascii || fragment.is_ascii() {
            return w.write_all(fragment.as_bytes());
        }
        let mut units = [0u16; 2];
        for c in fragment.chars() {
            if c.is_ascii() {
                w.write_all(&[c as u8])?;
            } else {
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
            }
        }
        Ok(())
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.pretty.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.pretty.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.pretty.end_object_value(w)
    }
}

/// The syntax check of the edited code cell of a Python notebook (its
/// source before and after; IPython's `%magic` and `!shell` lines are
/// blanked, they are not Python). None for other kernels, markdown and raw
/// cells, deletions and notebooks that do not parse.
fn python_cell_check(
    before: &str,
    after: &str,
    a: &NotebookEditArgs,
    shown: &str,
) -> Option<wrench_syntax::SyntaxReport> {
    if a.edit_mode == EditMode::Delete {
        return None;
    }
    let (old, new): (Value, Value) = (
        serde_json::from_str(before).ok()?,
        serde_json::from_str(after).ok()?,
    );
    let lang = new
        .pointer("/metadata/kernelspec/language")
        .or_else(|| new.pointer("/metadata/language_info/name"))
        .and_then(Value::as_str)?;
    if !lang.eq_ignore_ascii_case("python") {
        return None;
    }
    let cells = |nb: &Value| nb.get("cells").and_then(Value::as_array).cloned();
    let (old_cells, new_cells) = (cells(&old)?, cells(&new)?);
    // The edited cell: the first whose source differs (an insert shifts the rest).
    let i = (0..new_cells.len())
        .find(|&i| old_cells.get(i).map(source_text) != Some(source_text(&new_cells[i])))?;
    let cell = &new_cells[i];
    if cell.get("cell_type").and_then(Value::as_str) != Some("code") {
        return None;
    }
    let before_src = if old_cells.len() < new_cells.len() {
        String::new()
    } else {
        old_cells.get(i).map(source_text).unwrap_or_default()
    };
    wrench_syntax::check_as(
        wrench_syntax::Language::Python,
        &format!("{shown} (cell {i})"),
        &strip_magics(&before_src),
        &strip_magics(&source_text(cell)),
    )
}

/// A cell's source as one string (nbformat stores a string or a list).
fn source_text(cell: &Value) -> String {
    match cell.get("source") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// IPython lines (`%magic`, `%%cell magic`, `!shell`) blanked.
fn strip_magics(src: &str) -> String {
    src.split_inclusive('\n')
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with('%') || t.starts_with('!') {
                if l.ends_with('\n') { "\n" } else { "" }
            } else {
                l
            }
        })
        .collect()
}

/// The `notebook_edit` tool: replace, insert or delete one cell of a
/// Jupyter notebook.
pub struct NotebookEdit;

#[async_trait::async_trait]
impl Tool for NotebookEdit {
    type Args = NotebookEditArgs;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new::<NotebookEditArgs>(
            "notebook_edit",
            Effect::SelfAuthorized,
            "Replace, insert or delete one cell of a Jupyter notebook (.ipynb, nbformat 4) you have read, by 0-based cell_number or cell_id. Editing a code cell clears its outputs and execution count; inserted cells get ids (nbformat 4.5+). The JSON keeps its key order and indentation, so diffs stay small.",
        )
        .aliases(&["NotebookEdit"])
        .arg_alias("notebook_path", "path")
        .destructive()
    }

    fn access(&self, args: &NotebookEditArgs, ctx: &Context) -> Access {
        write_access(ctx, &args.path)
    }

    async fn plan(
        &self,
        args: &NotebookEditArgs,
        base: ActionPlan,
        ctx: &Context,
    ) -> ToolResult<ActionPlan> {
        plan_write(base, ctx, &args.path, Risk::Low)
    }

    async fn run(
        &self,
        args: NotebookEditArgs,
        auth: Authorized,
        ctx: &Context,
    ) -> ToolResult<ToolOutput> {
        let mut cell = None;
        let out = change_file(
            ctx,
            &auth,
            &args.path,
            "notebook_edit",
            args.dry_run,
            |text, shown| {
                let r = edit_notebook(text, &args, shown)?;
                cell = python_cell_check(text, &r.text, &args, shown);
                Ok(r)
            },
        )?;
        Ok(crate::common::add_syntax(
            out,
            cell.into_iter().collect(),
            args.dry_run,
        ))
    }
}
