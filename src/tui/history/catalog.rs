//! The history browser's index of the session's calls: one cached entry per call (lower-cased search text, status,
//! result size), kept in step with the growing call list at the cost of the calls that changed, and the list of calls
//! the current filter keeps. Sizes of results stored on disk are read by a background thread, never on the render path.

use std::sync::mpsc::{Receiver, Sender, channel};

use serde_json::Value;

use super::query::Query;
use crate::state::calls::{CallStatus, ToolCallState};
use crate::wrap;

/// Tool-name column width cap, in cells.
const TOOL_WIDTH_CAP: usize = 18;

/// What can change in a call after it is first seen: when this differs, the cached entry is rebuilt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sig {
    status: CallStatus,
    live_bytes: usize,
    output_len: Option<usize>,
    stored: bool,
}

impl Sig {
    pub(crate) fn of(call: &ToolCallState) -> Self {
        Self {
            status: call.status.clone(),
            live_bytes: call.live_bytes,
            output_len: call.output.as_ref().map(|o| o.text.len()),
            stored: call.full_output_path.is_some(),
        }
    }
}

struct Entry {
    call_id: String,
    sig: Sig,
    name_lc: String,
    /// Tool name, arguments and result text, lower-cased once so filtering is a plain substring search.
    haystack: String,
    /// `None` while the stored file's size is being read.
    size: Option<u64>,
    matched: bool,
}

impl Entry {
    fn new(call: &ToolCallState, query: &Query) -> Self {
        let name_lc = call.name.to_lowercase();
        let haystack = haystack(call);
        let matched = query.matches(&name_lc, &call.status, &haystack);
        let size = match (&call.status, &call.full_output_path, &call.output) {
            (_, Some(_), _) => None,
            (CallStatus::Running, None, _) => Some(call.live_bytes as u64),
            (_, None, output) => Some(output.as_ref().map_or(0, |o| o.text.len() as u64)),
        };
        Self {
            call_id: call.call_id.clone(),
            sig: Sig::of(call),
            name_lc,
            haystack,
            size,
            matched,
        }
    }
}

/// The text a filter word is looked for in: the tool name, the arguments (keys and values, strings unescaped so
/// `"foo"` finds a quoted word in a command) and the result the model got (the live output while running).
fn haystack(call: &ToolCallState) -> String {
    let mut s = String::with_capacity(64 + call.output.as_ref().map_or(0, |o| o.text.len()));
    s.push_str(&call.name);
    s.push('\n');
    push_value(&mut s, &call.args);
    s.push('\n');
    match &call.output {
        Some(output) => s.push_str(&output.text),
        None => {
            for line in &call.live {
                s.push_str(&line.text);
                s.push('\n');
            }
            s.push_str(&call.live_partial().text);
        }
    }
    s.to_lowercase()
}

fn push_value(s: &mut String, value: &Value) {
    match value {
        Value::String(text) => s.push_str(text),
        Value::Object(map) => {
            for (key, v) in map {
                s.push_str(key);
                s.push_str(": ");
                push_value(s, v);
                s.push('\n');
            }
        }
        Value::Array(items) => {
            for v in items {
                push_value(s, v);
                s.push('\n');
            }
        }
        other => s.push_str(&other.to_string()),
    }
}

struct SizeReport {
    index: usize,
    call_id: String,
    size: Option<u64>,
}

pub(crate) struct Catalog {
    entries: Vec<Entry>,
    /// Entries still running: the only ones whose call can change.
    unsettled: Vec<usize>,
    /// Indices of the calls the filter keeps, oldest first.
    visible: Vec<usize>,
    query: Query,
    tool_width: usize,
    size_tx: Sender<SizeReport>,
    size_rx: Receiver<SizeReport>,
    sizes_pending: usize,
}

impl Default for Catalog {
    fn default() -> Self {
        let (size_tx, size_rx) = channel();
        Self {
            entries: Vec::new(),
            unsettled: Vec::new(),
            visible: Vec::new(),
            query: Query::default(),
            tool_width: 4,
            size_tx,
            size_rx,
            sizes_pending: 0,
        }
    }
}

impl Catalog {
    /// Brings the index up to date with `calls`. Returns true when the visible list changed.
    pub(crate) fn sync(&mut self, calls: &[ToolCallState]) -> bool {
        let mut changed = self.receive_sizes();
        if self.replaced(calls) {
            // A new channel too, so reports still coming from old probes go nowhere.
            let query = std::mem::take(&mut self.query);
            *self = Self::default();
            self.query = query;
            changed = true;
        }
        let mut to_probe = Vec::new();
        let mut rematch = false;
        for i in std::mem::take(&mut self.unsettled) {
            let Some(call) = calls.get(i) else { continue };
            if Sig::of(call) != self.entries[i].sig {
                let entry = Entry::new(call, &self.query);
                rematch |= entry.matched != self.entries[i].matched;
                if entry.size.is_none() {
                    to_probe.push(i);
                }
                self.entries[i] = entry;
                changed = true;
            }
            if self.entries[i].sig.status == CallStatus::Running {
                self.unsettled.push(i);
            }
        }
        let first_new = self.entries.len();
        for (i, call) in calls.iter().enumerate().skip(first_new) {
            let entry = Entry::new(call, &self.query);
            if entry.size.is_none() {
                to_probe.push(i);
            }
            if call.status == CallStatus::Running {
                self.unsettled.push(i);
            }
            self.tool_width = self.tool_width.max(wrap::width(&call.name)).min(TOOL_WIDTH_CAP);
            self.entries.push(entry);
        }
        if rematch {
            self.rebuild_visible();
        } else {
            let added = (first_new..self.entries.len()).filter(|&i| self.entries[i].matched);
            self.visible.extend(added);
        }
        self.probe_sizes(calls, to_probe);
        changed || rematch || first_new < self.entries.len()
    }

    /// Sets the filter. Returns true when the visible list may have changed.
    pub(crate) fn set_query(&mut self, text: &str) -> bool {
        let query = Query::parse(text);
        if query == self.query {
            return false;
        }
        for entry in &mut self.entries {
            entry.matched = query.matches(&entry.name_lc, &entry.sig.status, &entry.haystack);
        }
        self.query = query;
        self.rebuild_visible();
        true
    }

    pub(crate) fn query(&self) -> &Query {
        &self.query
    }

    /// Calls kept by the filter, oldest first (indices into the call list).
    pub(crate) fn visible(&self) -> &[usize] {
        &self.visible
    }

    pub(crate) fn total(&self) -> usize {
        self.entries.len()
    }

    /// The result size in bytes, `None` while a stored file's size is being read.
    pub(crate) fn size(&self, index: usize) -> Option<u64> {
        self.entries.get(index).and_then(|e| e.size)
    }

    /// Width of the tool-name column (the widest name seen, capped).
    pub(crate) fn tool_width(&self) -> usize {
        self.tool_width
    }

    pub(crate) fn any_running(&self) -> bool {
        !self.unsettled.is_empty()
    }

    pub(crate) fn sizes_pending(&self) -> bool {
        self.sizes_pending > 0
    }

    fn replaced(&self, calls: &[ToolCallState]) -> bool {
        let n = self.entries.len();
        n > 0
            && (calls.len() < n
                || calls[0].call_id != self.entries[0].call_id
                || calls[n - 1].call_id != self.entries[n - 1].call_id)
    }

    fn rebuild_visible(&mut self) {
        self.visible.clear();
        self.visible.extend(
            self.entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.matched)
                .map(|(i, _)| i),
        );
    }

    fn receive_sizes(&mut self) -> bool {
        let mut any = false;
        while let Ok(report) = self.size_rx.try_recv() {
            self.sizes_pending = self.sizes_pending.saturating_sub(1);
            if let Some(entry) = self.entries.get_mut(report.index)
                && entry.call_id == report.call_id
            {
                entry.size = Some(report.size.unwrap_or(entry.sig.output_len.unwrap_or(0) as u64));
                any = true;
            }
        }
        any
    }

    /// Reads the sizes of stored results on one short-lived thread per batch (a batch is usually one call; the first
    /// sync of a long session sends them all at once).
    fn probe_sizes(&mut self, calls: &[ToolCallState], indices: Vec<usize>) {
        let batch: Vec<(usize, String, String)> = indices
            .into_iter()
            .filter_map(|i| {
                let call = calls.get(i)?;
                Some((i, call.call_id.clone(), call.full_output_path.clone()?))
            })
            .collect();
        if batch.is_empty() {
            return;
        }
        let count = batch.len();
        let fallback: Vec<(usize, String)> = batch.iter().map(|(i, id, _)| (*i, id.clone())).collect();
        let tx = self.size_tx.clone();
        let spawned = std::thread::Builder::new()
            .name("tern-history-sizes".into())
            .spawn(move || {
                for (index, call_id, path) in batch {
                    let size = std::fs::metadata(&path).ok().map(|m| m.len());
                    if tx.send(SizeReport { index, call_id, size }).is_err() {
                        return;
                    }
                }
            });
        match spawned {
            Ok(_) => self.sizes_pending += count,
            // No thread: show the in-memory preview's size rather than touching the disk here.
            Err(_) => {
                for (index, call_id) in fallback {
                    if let Some(entry) = self.entries.get_mut(index)
                        && entry.call_id == call_id
                    {
                        entry.size = Some(entry.sig.output_len.unwrap_or(0) as u64);
                    }
                }
            }
        }
    }
}
