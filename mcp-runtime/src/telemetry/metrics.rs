//! The conventions' two histograms, kept by the server itself and rendered as Prometheus text:
//! `mcp.server.operation.duration` (`mcp_server_operation_duration_seconds`) and
//! `mcp.server.session.duration` (`mcp_server_session_duration_seconds`).
//!
//! Labels are bounded by construction: methods from the table of known ones (anything else is
//! `_OTHER`), tool and prompt names only of items the server serves, error types from the error
//! codes the server sends; never a session id, an argument or a URI. Past [`MAX_SERIES`] label
//! sets per histogram, new ones are counted under one `_OTHER` series.
//!
//! Each label set is a cell, made the first time it is seen: its counts, which the Prometheus
//! text is rendered from, and (feature `otel`) the OpenTelemetry histogram bound to the same
//! labels once, so that recording an observation never builds, sorts or hashes an attribute
//! list: it finds the cell by its labels and adds to both.
//!
//! An operation's cell is found without hashing its labels: each method, and each served tool
//! and prompt, has a row of cells by revision, transport and outcome, reached by index (the
//! method's, or the item's in the registry snapshot the request found it in), and each of its
//! slots holds the cell the label set's map gave it the first time. The map stays the one place
//! cells are made and counted against the bound; an error code, which a row does not index, is
//! looked up in it.

use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use crate::protocol::{Method, ProtocolVersion};
use crate::server::Transport;
use crate::server::fast_map::FastMap;

/// The conventions' bucket boundaries, in seconds.
pub(crate) const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The most label sets one histogram keeps apart.
pub(crate) const MAX_SERIES: usize = 2_000;

/// One histogram series: counts per bucket (not cumulative), the sum and the count.
#[derive(Default)]
struct Series {
    buckets: [AtomicU64; BOUNDARIES.len() + 1],
    sum_nanos: AtomicU64,
    count: AtomicU64,
}

impl Series {
    fn observe(&self, duration: Duration) {
        let seconds = duration.as_secs_f64();
        let bucket = BOUNDARIES
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(BOUNDARIES.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }
}

/// What an operation is labelled with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Operation {
    /// A method of the table; `None` (`_OTHER`) for one the server does not know.
    pub(crate) method: Option<Method>,
    /// `gen_ai.tool.name` on `tools/call`, `gen_ai.prompt.name` on `prompts/get`.
    pub(crate) target: Option<(&'static str, Arc<str>)>,
    /// The JSON-RPC code, or `tool_error`.
    pub(crate) error: Option<ErrorType>,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) transport: Transport,
}

impl Operation {
    /// `mcp.method.name`.
    fn method_name(&self) -> &'static str {
        self.method.map_or("_OTHER", Method::name)
    }
}

impl Hash for Operation {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.method.map(|method| method as u8).hash(state);
        self.target.hash(state);
        self.error.hash(state);
        self.version.hash(state);
        self.transport.hash(state);
    }
}

/// `error.type`: the JSON-RPC error code, or a tool's `isError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ErrorType {
    Code(i64),
    ToolError,
}

impl ErrorType {
    pub(crate) fn label(self) -> String {
        match self {
            Self::Code(code) => code.to_string(),
            Self::ToolError => "tool_error".to_owned(),
        }
    }
}

/// What a session is labelled with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SessionLabels {
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) transport: Transport,
}

/// One label set's cell: the counts the text is rendered from and, with the `otel` feature,
/// the global meter provider's histogram bound to the same labels.
struct Cell {
    series: Series,
    #[cfg(feature = "otel")]
    bound: Option<opentelemetry::metrics::BoundHistogram<f64>>,
}

impl Cell {
    fn observe(&self, duration: Duration) {
        self.series.observe(duration);
        #[cfg(feature = "otel")]
        if let Some(bound) = &self.bound {
            bound.record(duration.as_secs_f64());
        }
    }
}

/// A label set a histogram keeps apart.
pub(crate) trait LabelSet: Eq + std::hash::Hash + Clone {
    /// The labels as OpenTelemetry attributes (the conventions' dotted names).
    #[cfg(feature = "otel")]
    fn attributes(&self) -> Vec<opentelemetry::KeyValue>;

    /// The attributes of the one cell that counts the label sets past [`MAX_SERIES`].
    #[cfg(feature = "otel")]
    fn overflow() -> Vec<opentelemetry::KeyValue>;
}

impl LabelSet for Operation {
    #[cfg(feature = "otel")]
    fn attributes(&self) -> Vec<opentelemetry::KeyValue> {
        meter::operation_attributes(self)
    }

    #[cfg(feature = "otel")]
    fn overflow() -> Vec<opentelemetry::KeyValue> {
        vec![opentelemetry::KeyValue::new("mcp.method.name", "_OTHER")]
    }
}

impl LabelSet for SessionLabels {
    #[cfg(feature = "otel")]
    fn attributes(&self) -> Vec<opentelemetry::KeyValue> {
        meter::session_attributes(self)
    }

    #[cfg(feature = "otel")]
    fn overflow() -> Vec<opentelemetry::KeyValue> {
        Vec::new()
    }
}

/// A histogram's cells by label set, bounded.
struct Histogram<L> {
    cells: Mutex<FastMap<L, Arc<Cell>>>,
    overflow: Arc<Cell>,
    /// The global meter provider's histogram (feature `otel`), bound once per cell.
    #[cfg(feature = "otel")]
    otel: Option<opentelemetry::metrics::Histogram<f64>>,
}

impl<L: LabelSet> Histogram<L> {
    fn new(#[cfg(feature = "otel")] otel: Option<opentelemetry::metrics::Histogram<f64>>) -> Self {
        #[cfg(feature = "otel")]
        let overflow = Cell {
            series: Series::default(),
            bound: otel
                .as_ref()
                .map(|histogram| histogram.bind(&L::overflow())),
        };
        #[cfg(not(feature = "otel"))]
        let overflow = Cell {
            series: Series::default(),
        };
        Self {
            cells: Mutex::new(FastMap::default()),
            overflow: Arc::new(overflow),
            #[cfg(feature = "otel")]
            otel,
        }
    }

    fn cell(&self, #[cfg_attr(not(feature = "otel"), allow(unused_variables))] labels: &L) -> Cell {
        Cell {
            series: Series::default(),
            #[cfg(feature = "otel")]
            bound: self
                .otel
                .as_ref()
                .map(|histogram| histogram.bind(&labels.attributes())),
        }
    }

    /// The cell of `labels`: the one it has, a new one while there is room, or the overflow.
    fn cell_for(&self, labels: &L) -> Arc<Cell> {
        let mut map = self.cells.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cell) = map.get(labels) {
            Arc::clone(cell)
        } else if map.len() < MAX_SERIES {
            let cell = Arc::new(self.cell(labels));
            map.insert(labels.clone(), Arc::clone(&cell));
            cell
        } else {
            Arc::clone(&self.overflow)
        }
    }

    fn observe(&self, labels: &L, duration: Duration) {
        self.cell_for(labels).observe(duration);
    }

    fn snapshot(&self) -> Vec<(L, Arc<Cell>)> {
        let map = self.cells.lock().unwrap_or_else(PoisonError::into_inner);
        map.iter()
            .map(|(l, s)| (l.clone(), Arc::clone(s)))
            .collect()
    }
}

/// The revisions a label names: none (a request before `initialize` settles one) and each of
/// [`ProtocolVersion::ALL`].
const VERSIONS: usize = ProtocolVersion::ALL.len() + 1;

/// The transports: stdio, Streamable HTTP, HTTP+SSE.
const TRANSPORTS: usize = 3;

/// The outcomes a row keeps apart: answered, or a tool's `isError` (an error code is looked up
/// in the map: a handler may send any).
const OUTCOMES: usize = 2;

/// Rows by method: room for every method of the table and `_OTHER` (one past it is looked up in
/// the map).
const METHOD_ROWS: usize = 32;

/// The cells of one method or one served item, by revision, transport and outcome.
struct Row([OnceLock<Arc<Cell>>; VERSIONS * TRANSPORTS * OUTCOMES]);

impl Default for Row {
    fn default() -> Self {
        Self(std::array::from_fn(|_| OnceLock::new()))
    }
}

impl Row {
    /// The slot of an operation's revision, transport and outcome; `None` for an error code.
    fn slot(labels: &Operation) -> Option<usize> {
        let outcome = match labels.error {
            None => 0,
            Some(ErrorType::ToolError) => 1,
            Some(ErrorType::Code(_)) => return None,
        };
        let version = labels.version.map_or(0, |version| version as usize + 1);
        let transport = match labels.transport {
            Transport::Stdio => 0,
            Transport::StreamableHttp => 1,
            Transport::LegacySse => 2,
        };
        (version < VERSIONS).then_some((version * TRANSPORTS + transport) * OUTCOMES + outcome)
    }
}

/// Where a request found its served tool or prompt: the registry snapshot (its generation) and
/// the item's index in it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item {
    pub(crate) generation: u64,
    pub(crate) index: usize,
}

/// Items past this index (in a registry of more) are looked up in the map.
const ITEM_ROWS: usize = 4_096;

/// The rows of one registry snapshot's tools (or prompts), by index, each made when its item is
/// first answered, with the name it was made for: a request that found another name at that
/// index (in a snapshot of the same generation, which one server never has) is looked up in the
/// map instead. A newer snapshot starts the rows over; its items' cells, found by their labels,
/// are the ones they had.
#[derive(Default)]
struct ItemRows {
    generation: u64,
    rows: Vec<OnceLock<Box<ItemRow>>>,
}

/// A served item's row, with the name it was made for.
struct ItemRow {
    name: Arc<str>,
    row: Row,
}

impl ItemRows {
    /// The row of `item`, named `name`, if these rows are of its snapshot and reach its index.
    fn row(&self, item: Item, name: &Arc<str>) -> Option<Option<&Row>> {
        if self.generation != item.generation {
            return None;
        }
        let entry = self.rows.get(item.index)?;
        let made = entry.get_or_init(|| {
            Box::new(ItemRow {
                name: Arc::clone(name),
                row: Row::default(),
            })
        });
        Some(Arc::ptr_eq(&made.name, name).then_some(&made.row))
    }
}

/// `mcp.server.operation.duration`: the cells by label set, and the rows that find them.
struct Operations {
    histogram: Histogram<Operation>,
    /// Operations that name no item, by method (`_OTHER` first).
    methods: Box<[Row]>,
    /// `tools/call` by tool.
    tools: RwLock<ItemRows>,
    /// `prompts/get` by prompt.
    prompts: RwLock<ItemRows>,
}

impl Operations {
    fn new(histogram: Histogram<Operation>) -> Self {
        Self {
            histogram,
            methods: (0..METHOD_ROWS).map(|_| Row::default()).collect(),
            tools: RwLock::default(),
            prompts: RwLock::default(),
        }
    }

    fn observe(&self, labels: &Operation, item: Option<Item>, duration: Duration) {
        let Some(slot) = Row::slot(labels) else {
            return self.histogram.observe(labels, duration);
        };
        match (labels.method, &labels.target, item) {
            (method, None, _) => {
                let index = method.map_or(0, |method| method as usize + 1);
                match self.methods.get(index) {
                    Some(row) => self.record(row, slot, labels, duration),
                    None => self.histogram.observe(labels, duration),
                }
            }
            (Some(Method::ToolsCall), Some((_, name)), Some(item)) => {
                self.record_item(&self.tools, item, name, slot, labels, duration);
            }
            (Some(Method::PromptsGet), Some((_, name)), Some(item)) => {
                self.record_item(&self.prompts, item, name, slot, labels, duration);
            }
            _ => self.histogram.observe(labels, duration),
        }
    }

    fn record(&self, row: &Row, slot: usize, labels: &Operation, duration: Duration) {
        row.0[slot]
            .get_or_init(|| self.histogram.cell_for(labels))
            .observe(duration);
    }

    fn record_item(
        &self,
        items: &RwLock<ItemRows>,
        item: Item,
        name: &Arc<str>,
        slot: usize,
        labels: &Operation,
        duration: Duration,
    ) {
        {
            let rows = items.read().unwrap_or_else(PoisonError::into_inner);
            match rows.row(item, name) {
                Some(Some(row)) => return self.record(row, slot, labels, duration),
                Some(None) => return self.histogram.observe(labels, duration),
                None => {}
            }
        }
        // A newer snapshot, or an index past the rows made so far.
        let mut rows = items.write().unwrap_or_else(PoisonError::into_inner);
        if rows.generation < item.generation {
            *rows = ItemRows {
                generation: item.generation,
                rows: Vec::new(),
            };
        }
        if rows.generation == item.generation
            && rows.rows.len() <= item.index
            && item.index < ITEM_ROWS
        {
            rows.rows.resize_with(item.index + 1, OnceLock::new);
        }
        match rows.row(item, name) {
            Some(Some(row)) => self.record(row, slot, labels, duration),
            // An older snapshot's item, or one past the rows.
            _ => {
                drop(rows);
                self.histogram.observe(labels, duration);
            }
        }
    }
}

/// The server's metrics.
pub(crate) struct Metrics {
    operations: Operations,
    sessions: Histogram<SessionLabels>,
    /// How many observations were made: a render of the same number is still current.
    observed: AtomicU64,
}

impl Metrics {
    /// The metrics; with the `otel` feature, recorded on the global meter provider too (as it
    /// is when the server is built).
    pub(crate) fn new() -> Self {
        #[cfg(feature = "otel")]
        let (operations, sessions) = {
            let [operations, sessions] = meter::histograms();
            (
                Histogram::new(Some(operations)),
                Histogram::new(Some(sessions)),
            )
        };
        #[cfg(not(feature = "otel"))]
        let (operations, sessions) = (Histogram::new(), Histogram::new());
        Self {
            operations: Operations::new(operations),
            sessions,
            observed: AtomicU64::new(0),
        }
    }

    /// An operation answered after `duration`; `item` is where the request found the tool or
    /// prompt its labels name.
    pub(crate) fn operation(&self, labels: &Operation, item: Option<Item>, duration: Duration) {
        self.operations.observe(labels, item, duration);
        self.observed.fetch_add(1, Ordering::Release);
    }

    pub(crate) fn session(&self, labels: &SessionLabels, duration: Duration) {
        self.sessions.observe(labels, duration);
        self.observed.fetch_add(1, Ordering::Release);
    }

    /// How many observations were made so far.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) fn observed(&self) -> u64 {
        self.observed.load(Ordering::Acquire)
    }

    /// Every series, in the Prometheus text exposition format (0.0.4).
    pub(crate) fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        let mut operations = self.operations.histogram.snapshot();
        operations.sort_by_key(|(l, _)| operation_labels(l));
        out.push_str(
            "# HELP mcp_server_operation_duration_seconds MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.\n\
             # TYPE mcp_server_operation_duration_seconds histogram\n",
        );
        for (labels, cell) in &operations {
            write_series(
                &mut out,
                "mcp_server_operation_duration_seconds",
                &operation_labels(labels),
                &cell.series,
            );
        }
        if self
            .operations
            .histogram
            .overflow
            .series
            .count
            .load(Ordering::Relaxed)
            > 0
        {
            let labels = vec![("mcp_method_name", "_OTHER".to_owned())];
            write_series(
                &mut out,
                "mcp_server_operation_duration_seconds",
                &labels,
                &self.operations.histogram.overflow.series,
            );
        }
        let mut sessions = self.sessions.snapshot();
        sessions.sort_by_key(|(l, _)| session_labels(l));
        out.push_str(
            "# HELP mcp_server_session_duration_seconds The duration of the MCP session as observed on the MCP server.\n\
             # TYPE mcp_server_session_duration_seconds histogram\n",
        );
        for (labels, cell) in &sessions {
            write_series(
                &mut out,
                "mcp_server_session_duration_seconds",
                &session_labels(labels),
                &cell.series,
            );
        }
        out
    }
}

type Labels = Vec<(&'static str, String)>;

fn common(labels: &mut Labels, version: Option<ProtocolVersion>, transport: Transport) {
    if let Some(version) = version {
        labels.push(("mcp_protocol_version", version.as_str().to_owned()));
    }
    labels.push((
        "network_transport",
        transport.network_transport().to_owned(),
    ));
    if transport != Transport::Stdio {
        labels.push(("network_protocol_name", "http".to_owned()));
    }
}

fn operation_labels(op: &Operation) -> Labels {
    let mut labels = vec![("mcp_method_name", op.method_name().to_owned())];
    if let Some((key, name)) = &op.target {
        labels.push((key, name.to_string()));
    }
    if op.method == Some(Method::ToolsCall) {
        labels.push(("gen_ai_operation_name", "execute_tool".to_owned()));
    }
    if let Some(error) = op.error {
        labels.push(("error_type", error.label()));
        if let ErrorType::Code(code) = error {
            labels.push(("rpc_response_status_code", code.to_string()));
        }
    }
    common(&mut labels, op.version, op.transport);
    labels
}

fn session_labels(session: &SessionLabels) -> Labels {
    let mut labels = Vec::new();
    common(&mut labels, session.version, session.transport);
    labels
}

fn write_series(out: &mut String, name: &str, labels: &Labels, series: &Series) {
    let mut cumulative = 0;
    for (i, bucket) in series.buckets.iter().enumerate() {
        cumulative += bucket.load(Ordering::Relaxed);
        let le = match BOUNDARIES.get(i) {
            Some(bound) => bound.to_string(),
            None => "+Inf".to_owned(),
        };
        let _ = writeln!(
            out,
            "{name}_bucket{{{}le=\"{le}\"}} {cumulative}",
            label_text(labels, true)
        );
    }
    let sum = series.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
    let _ = writeln!(out, "{name}_sum{} {sum}", braces(labels));
    let count = series.count.load(Ordering::Relaxed);
    let _ = writeln!(out, "{name}_count{} {count}", braces(labels));
}

fn braces(labels: &Labels) -> String {
    if labels.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", label_text(labels, false))
    }
}

/// `name="value",...` with values escaped as the format says (`\\`, `\"`, `\n`).
fn label_text(labels: &Labels, trailing_comma: bool) -> String {
    let mut out = String::new();
    for (i, (name, value)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    if trailing_comma && !labels.is_empty() {
        out.push(',');
    }
    out
}

/// The `otel` feature's side of the metrics: the histograms on the global meter provider and the
/// label sets as the conventions' attributes.
#[cfg(feature = "otel")]
mod meter {
    use opentelemetry::metrics::Histogram;
    use opentelemetry::{KeyValue, global};

    use super::{BOUNDARIES, ErrorType, Operation, SessionLabels};
    use crate::protocol::{Method, ProtocolVersion};
    use crate::server::Transport;

    /// The two histograms on the global meter provider (as it is when the server is built):
    /// `mcp.server.operation.duration` and `mcp.server.session.duration`. The metrics bind them to
    /// each label set once ([`Histogram::bind`]), so a record is an update of the bound cell.
    pub(crate) fn histograms() -> [Histogram<f64>; 2] {
        let meter = global::meter("mcp-runtime");
        [
            meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
            meter
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("The duration of the MCP session as observed on the MCP server.")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
        ]
    }

    /// An operation's labels as the conventions' attributes.
    pub(crate) fn operation_attributes(labels: &Operation) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(8);
        attributes.push(KeyValue::new("mcp.method.name", labels.method_name()));
        if let Some((key, name)) = &labels.target {
            let key = if *key == "gen_ai_tool_name" {
                "gen_ai.tool.name"
            } else {
                "gen_ai.prompt.name"
            };
            attributes.push(KeyValue::new(key, std::sync::Arc::clone(name)));
        }
        if labels.method == Some(Method::ToolsCall) {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        if let Some(error) = labels.error {
            attributes.push(KeyValue::new("error.type", error.label()));
            if let ErrorType::Code(code) = error {
                attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
        }
        common(&mut attributes, labels.version, labels.transport);
        attributes
    }

    /// A session's labels as the conventions' attributes.
    pub(crate) fn session_attributes(labels: &SessionLabels) -> Vec<KeyValue> {
        let mut attributes = Vec::new();
        common(&mut attributes, labels.version, labels.transport);
        attributes
    }

    fn common(
        attributes: &mut Vec<KeyValue>,
        version: Option<ProtocolVersion>,
        transport: Transport,
    ) {
        if let Some(version) = version {
            attributes.push(KeyValue::new("mcp.protocol.version", version.as_str()));
        }
        attributes.push(KeyValue::new(
            "network.transport",
            transport.network_transport(),
        ));
        if transport != Transport::Stdio {
            attributes.push(KeyValue::new("network.protocol.name", "http"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_labels_escaped() {
        let metrics = Metrics::new();
        let labels = Operation {
            method: Some(Method::ToolsCall),
            target: Some(("gen_ai_tool_name", Arc::from("a\"b"))),
            error: Some(ErrorType::ToolError),
            version: Some(ProtocolVersion::V2025_11_25),
            transport: Transport::Stdio,
        };
        metrics.operation(&labels, None, Duration::from_millis(15));
        metrics.operation(&labels, None, Duration::from_secs(400));
        let text = metrics.render();
        let prefix = r#"mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",gen_ai_tool_name="a\"b",gen_ai_operation_name="execute_tool",error_type="tool_error",mcp_protocol_version="2025-11-25",network_transport="pipe","#;
        assert!(
            text.contains(&format!("{prefix}le=\"0.01\"}} 0\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("{prefix}le=\"0.02\"}} 1\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("{prefix}le=\"300\"}} 1\n")),
            "{text}"
        );
        assert!(
            text.contains(&format!("{prefix}le=\"+Inf\"}} 2\n")),
            "{text}"
        );
        assert!(
            text.contains("_count{mcp_method_name=\"tools/call\""),
            "{text}"
        );
        assert!(text.contains(" 400.015\n"), "{text}");
    }

    #[test]
    fn a_full_render_stays_within_what_the_docs_say() {
        // Every series of the longest labels: a 64-character tool name, an error code, a
        // revision, HTTP.
        let metrics = Metrics::new();
        for i in 0..MAX_SERIES {
            let labels = Operation {
                method: Some(Method::ToolsCall),
                target: Some(("gen_ai_tool_name", Arc::from(format!("{i:0>64}")))),
                error: Some(ErrorType::Code(-32603)),
                version: Some(ProtocolVersion::V2025_11_25),
                transport: Transport::StreamableHttp,
            };
            metrics.operation(&labels, None, Duration::from_secs(1_000_000));
        }
        let text = metrics.render();
        // 11.8 MB: the README's limits table says 12 MiB.
        assert!(text.len() < 12 * 1024 * 1024, "{} bytes", text.len());
    }

    #[test]
    fn rows_find_the_cells_of_the_labels() {
        // One label set counted through its tool's row, through the row of a newer registry
        // snapshot (its own name at another index), as an older snapshot's request, through a
        // row that holds another name, and without a row: one series.
        let metrics = Metrics::new();
        let labels = Operation {
            method: Some(Method::ToolsCall),
            target: Some(("gen_ai_tool_name", Arc::from("add"))),
            error: None,
            version: Some(ProtocolVersion::V2025_11_25),
            transport: Transport::Stdio,
        };
        let at = |generation, index| Some(Item { generation, index });
        let millis = Duration::from_millis(1);
        metrics.operation(&labels, at(0, 3), millis);
        metrics.operation(&labels, at(0, 3), millis);
        let renamed = Operation {
            target: Some(("gen_ai_tool_name", Arc::from("add"))),
            ..labels.clone()
        };
        metrics.operation(&renamed, at(1, 0), millis);
        metrics.operation(&labels, at(0, 3), millis);
        metrics.operation(&labels, at(1, 0), millis);
        metrics.operation(&labels, None, millis);
        // Another outcome and an error code of the same tool, and a method that names no item.
        let failed = Operation {
            error: Some(ErrorType::ToolError),
            ..labels.clone()
        };
        metrics.operation(&failed, at(1, 0), millis);
        let refused = Operation {
            error: Some(ErrorType::Code(-32602)),
            ..labels.clone()
        };
        metrics.operation(&refused, at(1, 0), millis);
        let listed = Operation {
            method: Some(Method::ToolsList),
            target: None,
            ..labels.clone()
        };
        metrics.operation(&listed, None, millis);
        metrics.operation(&listed, None, millis);
        let text = metrics.render();
        assert_eq!(text.matches("_count{").count(), 4, "{text}");
        let tool = r#"mcp_method_name="tools/call",gen_ai_tool_name="add",gen_ai_operation_name="execute_tool","#;
        let rest = r#"mcp_protocol_version="2025-11-25",network_transport="pipe"}"#;
        for (labels, count) in [
            (format!("{tool}{rest}"), 6),
            (format!("{tool}error_type=\"tool_error\",{rest}"), 1),
            (
                format!("{tool}error_type=\"-32602\",rpc_response_status_code=\"-32602\",{rest}"),
                1,
            ),
            (format!("mcp_method_name=\"tools/list\",{rest}"), 2),
        ] {
            assert!(
                text.contains(&format!("_count{{{labels} {count}\n")),
                "{labels} {count}: {text}"
            );
        }
    }

    /// Past the bound, new label sets share the `_OTHER` series, whether a request's cell is
    /// found through its item's row or through the map.
    #[test]
    fn series_past_the_bound_share_one() {
        for through_rows in [false, true] {
            let metrics = Metrics::new();
            for i in 0..MAX_SERIES + 10 {
                let labels = Operation {
                    method: Some(Method::ToolsCall),
                    target: Some(("gen_ai_tool_name", Arc::from(format!("t{i}")))),
                    error: None,
                    version: None,
                    transport: Transport::StreamableHttp,
                };
                let item = through_rows.then_some(Item {
                    generation: 0,
                    index: i,
                });
                metrics.operation(&labels, item, Duration::from_millis(1));
                metrics.operation(&labels, item, Duration::from_millis(1));
            }
            let text = metrics.render();
            assert_eq!(text.matches("_count{").count(), MAX_SERIES + 1);
            assert!(
                text.contains("_count{mcp_method_name=\"_OTHER\"} 20\n"),
                "{text}"
            );
        }
    }
}
