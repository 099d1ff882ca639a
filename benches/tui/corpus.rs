//! A long, varied session as agent `Event`s, for the TUI benchmarks: turns of a user message, sometimes reasoning, a
//! short assistant note, parallel reads, an edit with its diff, a command with live output (sometimes expanded), and
//! a markdown answer with headings, lists, code blocks and now and then a table. Seeded, so every run lays out the
//! same transcript; every cell's text is distinct, so memory figures are not flattered by shared strings.

use serde_json::json;
use tern::protocol::{Event, FileDiff, ToolDetails, ToolOutput, TurnEnd, Usage};

/// The vocabulary of prose and identifiers.
const WORDS: &str = "the parser returns an error when input is empty and we should handle that case before calling \
     into cache layer which keeps entries per width so resize invalidates them config loader reads \
     file from workspace root then merges flags over defaults test suite covers both paths but not \
     timeout branch where retry budget runs out stream decoder splits events across chunks buffer \
     grows until newline arrives tool call result goes back to model with preview of output";

/// Code block languages, as fence info strings.
const LANGS: &[&str] = &["rust", "python", "typescript", "sh"];

/// Counts what it generated, for the report.
#[derive(Default)]
pub struct Totals {
    pub turns: u64,
    pub calls: u64,
    pub events: u64,
}

pub struct Corpus {
    rng: fastrand::Rng,
    words: Vec<&'static str>,
    next_call: u64,
    pub totals: Totals,
}

impl Corpus {
    pub fn new(seed: u64) -> Self {
        Self {
            rng: fastrand::Rng::with_seed(seed),
            words: WORDS.split_whitespace().collect(),
            next_call: 0,
            totals: Totals::default(),
        }
    }

    /// Sends the events of one whole turn to `sink`.
    pub fn turn(&mut self, sink: &mut impl FnMut(Event)) {
        self.totals.turns += 1;
        let turn = self.totals.turns;
        let mut out = vec![Event::TurnStarted {
            turn,
            text: self.prompt(turn),
        }];
        if self.rng.u8(0..10) < 3 {
            let reasoning = self.sentence(40, 90);
            for piece in reasoning.split_inclusive(' ').collect::<Vec<_>>().chunks(8) {
                out.push(Event::ReasoningDelta { text: piece.concat() });
            }
        }
        out.push(Event::AssistantMessage {
            text: format!("Let me look at `{}` first: {}.", self.path(turn), self.sentence(8, 20)),
            reasoning: None,
        });
        self.reads(turn, &mut out);
        self.edit(turn, &mut out);
        self.exec(&mut out);
        out.push(Event::AssistantMessage {
            text: self.answer(turn),
            reasoning: None,
        });
        let usage = Usage {
            input_tokens: 12_000 + turn * 300,
            output_tokens: 800,
            cache_read_tokens: 9_000,
            cache_write_tokens: 0,
        };
        out.push(Event::TokenUsage {
            last: usage,
            total: usage,
            context: None,
        });
        out.push(Event::TurnFinished {
            reason: TurnEnd::Completed,
        });
        self.totals.events += out.len() as u64;
        out.into_iter().for_each(sink);
    }

    /// Two or three parallel reads: one group cell.
    fn reads(&mut self, turn: u64, out: &mut Vec<Event>) {
        let mut reads = Vec::new();
        for k in 0..self.rng.u64(2..4) {
            reads.push((self.call_id(), self.path(turn * 7 + k)));
        }
        for (id, path) in &reads {
            out.push(Event::ToolCallBegin {
                call_id: id.clone(),
                name: "read_file".into(),
                kind: tern::protocol::ToolKind::Read,
                args: json!({"path": path}),
            });
        }
        for (id, path) in reads {
            let lines = self.rng.u64(20..400);
            let text = self.code("rust", turn, lines.min(40) as usize);
            let output = ToolOutput::text(text).with_details(ToolDetails::Read {
                path,
                first_line: 1,
                last_line: lines,
                total_lines: Some(lines),
            });
            out.push(self.end(id, "read_file", output));
        }
    }

    /// An edit: a diff of one to three changed lines, sometimes one added, in a 60-line file.
    fn edit(&mut self, turn: u64, out: &mut Vec<Event>) {
        let (id, path) = (self.call_id(), self.path(turn + 1));
        out.push(Event::ToolCallBegin {
            call_id: id.clone(),
            name: "edit_file".into(),
            kind: tern::protocol::ToolKind::Edit,
            args: json!({"path": path, "old_text": "x", "new_text": "y"}),
        });
        let old = self.code("rust", turn, 60);
        let mut lines: Vec<String> = old.lines().map(str::to_string).collect();
        for _ in 0..self.rng.usize(1..4) {
            let at = self.rng.usize(0..lines.len());
            let (a, b, c) = (self.word(), self.word(), self.word());
            lines[at] = format!("    let {a} = {b}(&{c}, {});", self.rng.u32(0..999));
        }
        if self.rng.bool() {
            let at = self.rng.usize(0..lines.len());
            lines.insert(at, format!("    // {}", self.sentence(6, 12)));
        }
        let diff = FileDiff::new(path.clone(), Some(old), Some(lines.join("\n") + "\n"));
        let text = format!("Edited {path}: +{} -{}", diff.added, diff.removed);
        let output = ToolOutput::text(text).with_details(ToolDetails::Diffs { diffs: vec![diff] });
        out.push(self.end(id, "edit_file", output));
    }

    /// A test run with live output (the caller expands some of them).
    fn exec(&mut self, out: &mut Vec<Event>) {
        let id = self.call_id();
        out.push(Event::ToolCallBegin {
            call_id: id.clone(),
            name: "exec".into(),
            kind: tern::protocol::ToolKind::Command,
            args: json!({"command": format!("cargo test {} -- --nocapture", self.word())}),
        });
        let n = self.rng.usize(12..48);
        let mut text = String::new();
        for i in 0..n {
            let line = format!("test {}::{}_{i} ... ok\n", self.word(), self.word());
            text.push_str(&line);
            if i % 4 == 0 {
                out.push(Event::ToolOutputDelta {
                    call_id: id.clone(),
                    chunk: line,
                });
            }
        }
        text.push_str(&format!("\ntest result: ok. {n} passed; 0 failed\n"));
        let output = ToolOutput::text(text).with_details(ToolDetails::Exec {
            exit_code: Some(0),
            duration_ms: 900,
            timed_out: false,
            sandboxed: true,
            new_git_repos: Vec::new(),
            background: None,
        });
        out.push(self.end(id, "exec", output));
    }

    /// Markdown answers, `pieces` words long, split into the deltas a model would stream (one word each).
    pub fn streamed_answer(&mut self, turn: u64, pieces: usize) -> Vec<String> {
        let mut text = String::new();
        while text.split_inclusive(' ').count() < pieces {
            text.push_str(&self.answer(turn));
            text.push_str("\n\n");
        }
        text.split_inclusive(' ').take(pieces).map(str::to_string).collect()
    }

    fn end(&mut self, call_id: String, name: &str, output: ToolOutput) -> Event {
        Event::ToolCallEnd {
            call_id,
            name: name.into(),
            output,
            duration_ms: self.rng.u64(1..2_000),
            full_output_path: None,
        }
    }

    fn call_id(&mut self) -> String {
        self.next_call += 1;
        self.totals.calls += 1;
        format!("call_{}", self.next_call)
    }

    fn word(&mut self) -> &'static str {
        self.words[self.rng.usize(0..self.words.len())]
    }

    fn sentence(&mut self, min: usize, max: usize) -> String {
        let n = self.rng.usize(min..max);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            s.push_str(self.word());
        }
        s
    }

    fn path(&mut self, salt: u64) -> String {
        let dir = ["src", "src/tui", "src/agent", "tests", "crates/core/src"][(salt % 5) as usize];
        format!("{dir}/{}_{salt}.rs", self.word())
    }

    fn prompt(&mut self, turn: u64) -> String {
        let mut p = format!("Turn {turn}: {}?", self.sentence(10, 40));
        if self.rng.u8(0..4) == 0 {
            p.push_str(&format!("\n\nHere is the failure:\n{}", self.sentence(20, 60)));
        }
        p
    }

    fn code(&mut self, lang: &str, salt: u64, lines: usize) -> String {
        let mut out = String::new();
        for i in 0..lines {
            let line = match (lang, i % 6) {
                ("rust", 0) => format!(
                    "pub fn {}_{salt}_{i}(input: &str) -> Result<usize, Error> {{",
                    self.word()
                ),
                ("rust", 5) => "}".to_string(),
                ("rust", _) => format!(
                    "    let {} = {}.{}({}, \"{}\")?;",
                    self.word(),
                    self.word(),
                    self.word(),
                    i * 3,
                    self.word()
                ),
                ("python", 0) => format!("def {}_{salt}_{i}(value, *, limit={i}):", self.word()),
                ("python", _) => format!(
                    "    {} = {}.{}(value)  # {}",
                    self.word(),
                    self.word(),
                    self.word(),
                    self.word()
                ),
                ("typescript", 0) => format!(
                    "export async function {}{salt}(x: number): Promise<string> {{",
                    self.word()
                ),
                ("typescript", 5) => "}".to_string(),
                ("typescript", _) => format!("  const {} = await {}(`${{x}}-{i}`);", self.word(), self.word()),
                (_, _) => format!("{} --{} {} | grep -c {}", self.word(), self.word(), self.word(), i),
            };
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// The final markdown answer of a turn, about 30 to 110 lines at 200 columns.
    fn answer(&mut self, turn: u64) -> String {
        let mut md = String::new();
        // One or (three times in four) two sections: a heading, prose, a list, a code block and more prose.
        for _ in 0..1 + usize::from(self.rng.u8(0..4) != 0) {
            let lang = LANGS[self.rng.usize(0..LANGS.len())];
            md.push_str(&format!("## {} {}\n\n", self.word(), self.word()));
            md.push_str(&self.sentence(60, 160));
            md.push_str("\n\n");
            for i in 0..self.rng.usize(3..7) {
                md.push_str(&format!(
                    "- **{}** `{}`: {}\n",
                    self.word(),
                    self.path(turn + i as u64),
                    self.sentence(8, 40)
                ));
            }
            md.push_str(&format!("\n```{lang}\n"));
            let lines = self.rng.usize(8..30);
            md.push_str(&self.code(lang, turn, lines));
            md.push_str("```\n\n");
            md.push_str(&self.sentence(40, 120));
            md.push_str("\n\n");
        }
        if self.rng.u8(0..4) == 0 {
            md.push_str("| file | before | after |\n|---|---:|---:|\n");
            for _ in 0..self.rng.usize(3..8) {
                md.push_str(&format!(
                    "| `{}` | {} ms | {} ms |\n",
                    self.path(turn),
                    self.rng.u32(10..900),
                    self.rng.u32(1..90)
                ));
            }
            md.push('\n');
        }
        md.push_str(&format!(
            "1. {}\n2. {}\n3. {}\n",
            self.sentence(5, 15),
            self.sentence(5, 15),
            self.sentence(5, 15)
        ));
        md
    }
}
