//! tern's own time per model step in a long turn: a scripted model over real HTTP on 127.0.0.1 calls a no-op tool once
//! per step for N steps, then answers. The server notes when it finished sending response N, when the head of request
//! N+1 arrived and when its whole body had arrived. Response sent to request head is tern's own work for that step
//! (decoding the answer, running the call through prepare, gate, run and record, building the next request); head to
//! whole body is sending the body over loopback, which grows with the conversation on any client that resends it. The
//! server counts body bytes without keeping them, so its own copying is not in either figure. One part of sending
//! stays in the first figure: the client writes head and body with one `writev`, and on loopback the server sees the
//! head only when that call returns, after the kernel has copied the body into the socket (0.014 ms at 50 KB, 0.05
//! ms at 470 KB here). Tracing the system calls separates it: `perf record -e 'syscalls:sys_*_writev' -e
//! 'syscalls:sys_*_sendto'` on this bench, then the time from the server's `sendto` of an answer to tern's `writev`
//! of the next request is tern's own work alone (see CHANGELOG for the figures). It prints the median
//! per window of steps, so a cost that grows with the conversation shows as a growing figure. Run with `cargo bench
//! --bench steps`; `TERN_BENCH_STEPS` sets N (default 2,000), `TERN_BENCH_RUNS` how many turns are run (default 3;
//! each window's figure is the median over the turns of its median), `TERN_BENCH_PROVIDER=anthropic` uses the
//! Anthropic wire format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tern::agent::approval::{ApprovalGate, ApprovalMode};
use tern::agent::{AgentConfig, spawn};
use tern::protocol::{Event, Op};
use tern::provider::{ProviderConfig, ProviderKind};
use tern::session::ToolResultStore;
use tern::tools::{PathPolicy, ToolRegistry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[path = "common/noop.rs"]
mod noop;
use noop::Noop;

/// When each request's head arrived, when it arrived whole and when its response was sent whole.
#[derive(Default)]
struct Clock {
    headed: Vec<Instant>,
    arrived: Vec<Instant>,
    answered: Vec<Instant>,
    /// Each request's body size in bytes.
    sizes: Vec<usize>,
}

/// The scripted model: request `n` (from 0) is answered with one `noop` call while `n < steps`, then with text.
async fn serve(listener: TcpListener, steps: usize, kind: ProviderKind, clock: Arc<Mutex<Clock>>) {
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(connection(stream, steps, kind, Arc::clone(&clock)));
    }
}

/// How much the server reads at a time until it has a request's head.
const HEAD_READ: usize = 4 * 1024;

async fn connection(mut stream: TcpStream, steps: usize, kind: ProviderKind, clock: Arc<Mutex<Clock>>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        // One request: the head, then Content-Length bytes of body, counted and dropped.
        let (head_end, length) = loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                break (end + 4, length);
            }
            // The head is read in small pieces: a read as large as the body's chunks would copy up to that much of
            // the body before the head is seen, and its time would count as tern's own (it did, up to 256 KB).
            match stream.read(&mut chunk[..HEAD_READ]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let headed = Instant::now();
        let mut missing = (head_end + length).saturating_sub(buf.len());
        buf.drain(..(head_end + length).min(buf.len()));
        while missing > 0 {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) if n > missing => {
                    buf.extend_from_slice(&chunk[missing..n]);
                    missing = 0;
                }
                Ok(n) => missing -= n,
            }
        }
        let n = {
            let mut c = clock.lock().unwrap();
            c.headed.push(headed);
            c.arrived.push(Instant::now());
            c.sizes.push(length);
            c.arrived.len() - 1
        };
        let body = match kind {
            ProviderKind::OpenAi => openai_answer(n, steps),
            ProviderKind::Anthropic => anthropic_answer(n, steps),
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(response.as_bytes()).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        clock.lock().unwrap().answered.push(Instant::now());
    }
}

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn openai_answer(n: usize, steps: usize) -> String {
    let mut out = String::new();
    if n < steps {
        let call = json!({"index": 0, "id": format!("call_{n}"), "type": "function",
            "function": {"name": "noop", "arguments": json!({"i": n}).to_string()}});
        out += &sse(&json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]}));
        out += &sse(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    } else {
        out += &sse(&json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "done"}}]}));
        out += &sse(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    }
    out += &sse(&json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}));
    out + "data: [DONE]\n\n"
}

fn anthropic_answer(n: usize, steps: usize) -> String {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut out = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
            "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    let stop = if n < steps {
        out += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": format!("toolu_{n}"), "name": "noop", "input": {}}}),
        );
        out += &event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": json!({"i": n}).to_string()}}),
        );
        "tool_use"
    } else {
        out += &event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        );
        out += &event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done"}}),
        );
        "end_turn"
    };
    out += &event("content_block_stop", json!({"type": "content_block_stop", "index": 0}));
    out += &event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}}),
    );
    out + &event("message_stop", json!({"type": "message_stop"}))
}

/// One turn's figures per step.
struct Turn {
    /// Response N sent to the head of request N+1: tern's own work.
    own: Vec<Duration>,
    /// Response N sent to the whole of request N+1: its own work and sending the body.
    whole: Vec<Duration>,
    /// Each request's body size.
    sizes: Vec<usize>,
}

/// Runs one turn of `steps` steps.
async fn turn(steps: usize, kind: ProviderKind) -> Turn {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let clock = Arc::new(Mutex::new(Clock::default()));
    let server = tokio::spawn(serve(listener, steps, kind, Arc::clone(&clock)));
    let dir = tempfile::tempdir().unwrap();
    let mut provider = ProviderConfig::new(kind, "bench-model");
    provider.base_url = match kind {
        ProviderKind::OpenAi => format!("http://{addr}/v1"),
        ProviderKind::Anthropic => format!("http://{addr}"),
    };
    provider.api_key = Some("bench-key".into());
    let mut tools = ToolRegistry::new();
    tools.register(Arc::new(Noop("ok: a short result of a few dozen characters")));
    let mut agent = spawn(
        AgentConfig::new(
            tern::provider::build(&provider).unwrap(),
            tools,
            PathPolicy::new(dir.path()).unwrap(),
            ApprovalGate::new(ApprovalMode::FullAuto, vec![], vec![]),
            "You are a benchmark. ".repeat(200).into(),
            ToolResultStore::new(dir.path().join("results")),
        )
        .with_max_iterations(u32::MAX)
        .with_context_window(u64::MAX / 2)
        .with_reserve_tokens(0),
    );
    agent.ops.send(Op::UserTurn { text: "go".into() }).unwrap();
    while let Some(event) = agent.events.recv().await {
        match event {
            Event::TurnFinished { .. } => break,
            Event::Error { message } => panic!("the turn failed: {message}"),
            _ => {}
        }
    }
    server.abort();
    let clock = clock.lock().unwrap();
    assert_eq!(
        clock.arrived.len(),
        steps + 1,
        "one request per step and the last answer"
    );
    let gaps = |to: &[Instant]| {
        (0..steps)
            .map(|n| to[n + 1].duration_since(clock.answered[n]))
            .collect()
    };
    Turn {
        own: gaps(&clock.headed),
        whole: gaps(&clock.arrived),
        sizes: clock.sizes.clone(),
    }
}

fn median_ms(gaps: &[Duration]) -> f64 {
    let mut v: Vec<f64> = gaps.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let steps: usize = std::env::var("TERN_BENCH_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000)
        .max(200);
    let kind = match std::env::var("TERN_BENCH_PROVIDER").as_deref() {
        Ok("anthropic") => ProviderKind::Anthropic,
        _ => ProviderKind::OpenAi,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let runs: usize = std::env::var("TERN_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    rt.block_on(async {
        turn(50, kind).await; // warm-up
        let mut turns = Vec::new();
        for _ in 0..runs {
            turns.push(turn(steps, kind).await);
        }
        // The median over the turns of each turn's median over steps `from..to` of the figure `pick` takes.
        let median = |pick: fn(&Turn) -> &[Duration], from: usize, to: usize| {
            let mut medians: Vec<f64> = turns.iter().map(|t| median_ms(&pick(t)[from..to])).collect();
            medians.sort_by(f64::total_cmp);
            medians[medians.len() / 2]
        };
        let own: fn(&Turn) -> &[Duration] = |t| &t.own;
        let whole: fn(&Turn) -> &[Duration] = |t| &t.whole;
        let sizes = &turns[0].sizes;
        println!(
            "tern's time per step, {kind} wire format, {runs} turn(s) of {steps} steps (median per window, median \
             over turns): its own work (answer received to the next request's head), and with sending the body"
        );
        let (first, first_whole) = (median(own, 0, 200), median(whole, 0, 200));
        println!(
            "  steps 1-200:{first:>13.3} ms own {first_whole:>9.3} ms with the body   request body at step 200: \
             {:>6} KB",
            sizes[199] / 1024
        );
        // The figure: the last 100 steps against the first 100 (goal: within 1.2x).
        let (head, tail) = (median(own, 0, 100), median(own, steps - 100, steps));
        let (head_whole, tail_whole) = (median(whole, 0, 100), median(whole, steps - 100, steps));
        println!(
            "  first 100: {head:.3} ms   last 100: {tail:.3} ms   ({:.2}x; goal: within 1.2x)   with the body: \
             {head_whole:.3} → {tail_whole:.3} ms ({:.2}x; request body at step {steps}: {} KB)",
            tail / head,
            tail_whole / head_whole,
            sizes[steps - 1] / 1024,
        );
        for end in [1_000, 2_000, 5_000, 10_000].into_iter().filter(|&e| e <= steps) {
            let (m, w) = (median(own, end - 200, end), median(whole, end - 200, end));
            println!(
                "  steps {}-{end}:{m:>10.3} ms own {w:>9.3} ms with the body   request body at step {end}: {:>6} KB   \
                 ({:.1}x the first 200; goal at 1,000: within 2x)",
                end - 199,
                sizes[end - 1] / 1024,
                m / first
            );
        }
    });
}
