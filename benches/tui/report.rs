//! Statistics, the figures table, and readers of /proc for a process's CPU time, wake-ups and memory.

use std::time::{Duration, Instant};

/// Wall time and this thread's CPU time of one piece of work. On a shared machine the wall time includes time the
/// thread waited for a core; the CPU time is the work itself.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    pub wall: Duration,
    pub cpu: Duration,
}

pub struct Clock {
    wall: Instant,
    cpu: Duration,
}

impl Clock {
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: thread_cpu(),
        }
    }

    pub fn stop(&self) -> Timed {
        Timed {
            cpu: thread_cpu().saturating_sub(self.cpu),
            wall: self.wall.elapsed(),
        }
    }
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to; the clock id is a constant the kernel knows.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall and CPU samples of the same runs.
pub struct Measure {
    pub wall: Samples,
    pub cpu: Samples,
}

impl Measure {
    pub fn new(runs: &[Timed]) -> Self {
        let wall: Vec<Duration> = runs.iter().map(|t| t.wall).collect();
        let cpu: Vec<Duration> = runs.iter().map(|t| t.cpu).collect();
        Self {
            wall: Samples::new(&wall),
            cpu: Samples::new(&cpu),
        }
    }
}

/// Sorted samples in microseconds.
pub struct Samples(Vec<f64>);

impl Samples {
    pub fn new(durations: &[Duration]) -> Self {
        let mut v: Vec<f64> = durations.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        v.sort_by(f64::total_cmp);
        Self(v)
    }

    pub fn from_ms(values: &[f64]) -> Self {
        let mut v: Vec<f64> = values.iter().map(|ms| ms * 1000.0).collect();
        v.sort_by(f64::total_cmp);
        Self(v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The value at quantile `q` (nearest rank).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.0.is_empty() {
            return f64::NAN;
        }
        let rank = ((q * self.0.len() as f64).ceil() as usize).clamp(1, self.0.len());
        self.0[rank - 1]
    }

    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    pub fn p99(&self) -> f64 {
        self.quantile(0.99)
    }

    pub fn max(&self) -> f64 {
        self.0.last().copied().unwrap_or(f64::NAN)
    }
}

/// The median of a few plain values.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(f64::NAN)
}

/// One row of the figures table: latency columns, or one free-form value across them.
pub struct Row {
    pub figure: String,
    pub values: Values,
    pub goal: String,
    /// "ok", "MISS" or "-" (no goal).
    pub verdict: &'static str,
}

pub enum Values {
    /// Wall median, p99, max, and the CPU time of the same runs (median / p99).
    Latency([String; 4]),
    Text(String),
}

impl Row {
    /// A latency row from samples, judged on p99 (or on the median with `on_median`) against `goal_us`.
    pub fn latency(figure: impl Into<String>, s: &Samples, goal_us: Option<f64>, on_median: bool) -> Self {
        Self::with_cpu(figure, s, "-".into(), goal_us, on_median)
    }

    /// A latency row with the CPU time of the same runs beside the wall time.
    pub fn measured(figure: impl Into<String>, m: &Measure, goal_us: Option<f64>, on_median: bool) -> Self {
        let cpu = format!("{} / {}", ms(m.cpu.median()), ms(m.cpu.p99()));
        Self::with_cpu(figure, &m.wall, cpu, goal_us, on_median)
    }

    fn with_cpu(figure: impl Into<String>, s: &Samples, cpu: String, goal_us: Option<f64>, on_median: bool) -> Self {
        let judged = if on_median { s.median() } else { s.p99() };
        Row {
            figure: format!("{} (n={})", figure.into(), s.len()),
            values: Values::Latency([ms(s.median()), ms(s.p99()), ms(s.max()), cpu]),
            goal: goal_us.map_or("-".into(), |g| {
                format!("{} < {}", if on_median { "median" } else { "p99" }, ms(g))
            }),
            verdict: verdict(goal_us.map(|g| judged < g)),
        }
    }

    /// A row with one value across the latency columns.
    pub fn value(figure: impl Into<String>, value: String, goal: impl Into<String>, ok: Option<bool>) -> Self {
        Row {
            figure: figure.into(),
            values: Values::Text(value),
            goal: goal.into(),
            verdict: verdict(ok),
        }
    }

    pub fn skipped(figure: impl Into<String>, why: &str) -> Self {
        Self::value(figure, format!("skipped: {why}"), "", None)
    }
}

fn verdict(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "ok",
        Some(false) => "MISS",
        None => "-",
    }
}

/// Microseconds as milliseconds with a sensible precision.
pub fn ms(us: f64) -> String {
    if us.is_nan() {
        "n/a".into()
    } else if us < 10_000.0 {
        format!("{:.3} ms", us / 1000.0)
    } else {
        format!("{:.1} ms", us / 1000.0)
    }
}

pub fn print_table(rows: &[Row]) {
    const COLUMNS: [(&str, usize); 4] = [("median", 10), ("p99", 10), ("max", 10), ("cpu median / p99", 21)];
    let span = COLUMNS.iter().map(|(_, w)| w + 2).sum::<usize>() - 2;
    let w0 = rows.iter().map(|r| r.figure.chars().count()).max().unwrap_or(0);
    let w_goal = rows.iter().map(|r| r.goal.chars().count()).max().unwrap_or(0).max(4);
    let header: Vec<String> = COLUMNS.iter().map(|(name, w)| format!("{name:>w$}")).collect();
    println!("{:<w0$}  {}  {:<w_goal$}  verdict", "figure", header.join("  "), "goal");
    println!("{}", "-".repeat(w0 + span + w_goal + 13));
    for r in rows {
        let values = match &r.values {
            Values::Latency(cells) => {
                let cells: Vec<String> = cells
                    .iter()
                    .zip(COLUMNS)
                    .map(|(c, (_, w))| format!("{c:>w$}"))
                    .collect();
                cells.join("  ")
            }
            Values::Text(text) => format!("{text:>span$}"),
        };
        println!("{:<w0$}  {values}  {:<w_goal$}  {}", r.figure, r.goal, r.verdict);
    }
}

/// A process's counters at one moment.
#[derive(Debug, Clone, Default)]
pub struct ProcSample {
    /// utime + stime of all its threads, living and exited, in clock ticks (/proc/PID/stat).
    pub ticks: u64,
    /// Time on a CPU of its living threads, in nanoseconds (/proc/PID/task/*/schedstat).
    pub sched_ns: u64,
    /// Voluntary + involuntary context switches of its living threads: every wake-up counts one.
    pub switches: u64,
    pub threads: u64,
    /// `sched_ns` by thread name (threads of one name summed).
    pub by_name: std::collections::BTreeMap<String, u64>,
}

impl ProcSample {
    pub fn read(pid: u32) -> Option<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name (which may contain spaces) start at field 3.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        let mut sample = ProcSample {
            ticks,
            ..Self::default()
        };
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
            let dir = task.path();
            if let Ok(s) = std::fs::read_to_string(dir.join("schedstat")) {
                let ns = s
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
                sample.sched_ns += ns;
                let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
                *sample.by_name.entry(name.trim().to_string()).or_default() += ns;
            }
            if let Ok(status) = std::fs::read_to_string(dir.join("status")) {
                sample.switches += ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"]
                    .iter()
                    .filter_map(|key| status_field(&status, key))
                    .sum::<u64>();
            }
            sample.threads += 1;
        }
        Some(sample)
    }
}

/// Clock ticks a second (for /proc/PID/stat times).
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// A numeric field of a /proc status file (the first number after `key`).
pub fn status_field(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// VmRSS and VmHWM of a process in MB ("self" for this one).
pub fn memory_mb(pid: &str) -> Option<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = status_field(&status, "VmRSS:")? as f64 / 1024.0;
    let hwm = status_field(&status, "VmHWM:")? as f64 / 1024.0;
    Some((rss, hwm))
}
