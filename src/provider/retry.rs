//! When and how long to wait before sending a failed request again: the retry policy, exponential backoff with full
//! jitter, `Retry-After` parsing, and the loop that runs attempts, reports each retry and stops at once on
//! cancellation. What counts as retryable is decided by `ProviderError::is_retryable` and the server's own hints.

use std::future::Future;
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::{Completion, ProviderError, ProviderEvent};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// The backoff window of the first retry; it doubles with each retry.
    pub base_delay: Duration,
    /// No wait is longer than this, a server's `Retry-After` included.
    pub max_delay: Duration,
    /// A response that sends no bytes for this long is stalled: the attempt is abandoned and retried.
    pub idle_timeout: Duration,
    /// The longest one attempt may take, from sending the request to the end of the answer, however steadily the
    /// server sends bytes: keep-alive comments reset the idle timeout but not this.
    pub request_timeout: Duration,
    pub connect_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(90),
            request_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(20),
        }
    }
}

impl RetryPolicy {
    /// The pause before retry number `retry` (1 is the first retry): a uniformly random time up to
    /// `base_delay * 2^(retry-1)`, capped by `max_delay` ("full jitter", which spreads out clients that failed
    /// together).
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let window = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)))
            .min(self.max_delay);
        let nanos = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(fastrand::u64(0..=nanos))
    }

    /// The pause before retry number `retry`: the server's `Retry-After` when it gave one (capped by `max_delay`),
    /// the jittered backoff otherwise.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(self.max_delay),
            None => self.backoff(retry),
        }
    }
}

/// HTTP statuses worth sending again: timeouts, conflicts (a lock on the provider's side), rate limits and server
/// errors (529 "overloaded" included).
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..=599).contains(&status)
}

/// Wordings of "the prompt does not fit the context window": OpenAI's `context_length_exceeded` code and message,
/// Anthropic's "prompt is too long", and what OpenAI-compatible servers (vLLM, llama.cpp, LM Studio, Ollama,
/// OpenRouter, DeepSeek, Mistral, Groq, Gemini's compatibility layer) commonly say. Matched on the lower-cased error.
const OVERFLOW_WORDINGS: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "context length exceeded",
    "exceeds the context window",
    "exceeds the maximum context",
    "prompt is too long",
    "exceed_context_size",
    "exceeds the available context size",
    "context window exceeded",
    "context size exceeded",
    "maximum model length",
    "input is too long",
    "too many tokens in the prompt",
    "reduce the length of the messages",
    "input token count",
];

/// Whether an error from the provider says the prompt is larger than the model's context window. A rate limit
/// (429) never is, whatever it says about tokens ("Request too large ... tokens per minute").
pub(crate) fn is_context_overflow(status: Option<u16>, text: &str) -> bool {
    if status == Some(429) {
        return false;
    }
    let text = text.to_ascii_lowercase();
    OVERFLOW_WORDINGS.iter().any(|w| text.contains(w))
}

/// How long the server asked us to wait: `retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms.min(1e12) / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = value.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs.min(1e9)));
    }
    let when = parse_http_date(value)?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The server's explicit verdict (`x-should-retry: true|false`, sent by OpenAI and Anthropic), when present.
pub(crate) fn should_retry_header(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Parses the three date formats HTTP allows: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let mut month = None;
    let mut time = None;
    let mut numbers = Vec::new();
    for token in text.split([' ', ',', '-']).filter(|t| !t.is_empty()) {
        let lower = token.to_ascii_lowercase();
        if let Some(i) = MONTHS.iter().position(|m| *m == lower) {
            month = Some(i as u32 + 1);
        } else if token.contains(':') {
            let parts: Vec<u32> = token.split(':').map(str::parse).collect::<Result<_, _>>().ok()?;
            let [h, m, s] = parts.as_slice() else { return None };
            time = Some((*h, *m, *s));
        } else if token.bytes().all(|b| b.is_ascii_digit()) {
            numbers.push(token.parse::<i64>().ok()?);
        }
    }
    let (month, (h, m, s)) = (month?, time?);
    let [day, year] = numbers.as_slice() else { return None };
    let year = match *year {
        y @ 0..=69 => y + 2000,
        y @ 70..=99 => y + 1900,
        y => y,
    };
    if !(1..=31).contains(day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, *day);
    let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s);
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One failed attempt, with what the server said about retrying it.
#[derive(Debug)]
pub(crate) struct Failure {
    pub error: ProviderError,
    pub retry_after: Option<Duration>,
    pub should_retry: Option<bool>,
}

impl From<ProviderError> for Failure {
    fn from(error: ProviderError) -> Self {
        Self {
            error,
            retry_after: None,
            should_retry: None,
        }
    }
}

/// Runs `attempt(n)` for n = 1, 2, ... until one succeeds, one fails in a way not worth retrying, or the policy's
/// attempts are used up. Each retry is announced with `ProviderEvent::Retrying` before the pause. Cancellation ends
/// an attempt in flight or a pause at once.
pub(crate) async fn run<F, Fut>(
    policy: &RetryPolicy,
    events: &UnboundedSender<ProviderEvent>,
    cancel: &CancellationToken,
    mut attempt: F,
) -> Result<Completion, ProviderError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<Completion, Failure>>,
{
    let max_attempts = policy.max_attempts.max(1);
    let mut number = 1;
    loop {
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            result = attempt(number) => result,
        };
        let failure = match result {
            Ok(completion) => return Ok(completion),
            Err(failure) => failure,
        };
        let failure = match failure.error {
            // An error event inside a stream may be the overflow too (compatible servers report it that way).
            ProviderError::Api { kind, message }
                if is_context_overflow(None, &kind) || is_context_overflow(None, &message) =>
            {
                Failure::from(ProviderError::ContextOverflow(message))
            }
            error => Failure { error, ..failure },
        };
        let retryable = match failure.error {
            ProviderError::Cancelled | ProviderError::Config(_) | ProviderError::ContextOverflow(_) => false,
            ref error => failure.should_retry.unwrap_or_else(|| error.is_retryable()),
        };
        if !retryable {
            return Err(failure.error);
        }
        if number >= max_attempts {
            if max_attempts == 1 {
                return Err(failure.error);
            }
            return Err(ProviderError::RetriesExhausted {
                attempts: number,
                last: Box::new(failure.error),
            });
        }
        let delay = policy.delay(number, failure.retry_after);
        let reason = failure.error.to_string();
        tracing::warn!(attempt = number, ?delay, %reason, "provider request failed; retrying");
        let _ = events.send(ProviderEvent::Retrying {
            attempt: number + 1,
            max_attempts,
            delay,
            reason,
        });
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            () = tokio::time::sleep(delay) => {}
        }
        number += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;
    use std::sync::atomic::{AtomicU32, Ordering};
    use tern_protocol::{FinishReason, Usage};

    fn policy(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            ..RetryPolicy::default()
        }
    }

    fn done() -> Completion {
        Completion {
            content: "ok".into(),
            reasoning: None,
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
        }
    }

    #[test]
    fn context_overflow_wordings() {
        let overflows = [
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"error":{"message":"Your input exceeds the context window of this model.","code":"context_length_exceeded"}}"#,
            "prompt is too long: 208931 tokens > 200000 maximum",
            r#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
            "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
            "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",
            "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length exceeded",
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            "Please reduce the length of the messages or completion.",
        ];
        for text in overflows {
            assert!(is_context_overflow(Some(400), text), "{text}");
        }
        let others = [
            "Rate limit reached for gpt-4.1 on tokens per min (TPM): Limit 30000, Requested 50000.",
            "Incorrect API key provided",
            "Overloaded",
            "model \"qwen\" not found",
        ];
        for text in others {
            assert!(!is_context_overflow(Some(400), text), "{text}");
        }
        assert!(!is_context_overflow(Some(429), "maximum context length"));
    }

    #[tokio::test]
    async fn an_overflow_reported_in_the_stream_is_not_retried() {
        let policy = policy(5);
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let attempts = AtomicU32::new(0);
        let result = run(&policy, &tx, &CancellationToken::new(), |_| {
            attempts.fetch_add(1, Ordering::SeqCst);
            async {
                Err(Failure::from(ProviderError::Api {
                    kind: "invalid_request_error".into(),
                    message: "prompt is too long: 300000 tokens > 200000 maximum".into(),
                }))
            }
        })
        .await;
        assert!(matches!(result, Err(ProviderError::ContextOverflow(ref m)) if m.contains("too long")));
        assert_eq!(attempts.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn backoff_stays_inside_its_window() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        for _ in 0..200 {
            assert!(p.backoff(1) <= Duration::from_millis(100));
            assert!(p.backoff(3) <= Duration::from_millis(400));
            assert!(p.backoff(10) <= Duration::from_millis(1000));
            assert!(p.backoff(u32::MAX) <= Duration::from_millis(1000));
        }
        // Full jitter really spreads: 200 draws from a 1 s window are not all the same.
        let draws: std::collections::HashSet<Duration> = (0..200).map(|_| p.backoff(10)).collect();
        assert!(draws.len() > 100);
    }

    #[test]
    fn retry_after_is_honoured_but_capped() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(1, Some(Duration::from_secs(7))), Duration::from_secs(7));
        assert_eq!(p.delay(1, Some(Duration::from_secs(3600))), Duration::from_secs(60));
    }

    #[test]
    fn retry_after_formats() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_700);
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after", HeaderValue::from_static("12"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(12)));
        h.insert("retry-after", HeaderValue::from_static(" 1.5 "));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(1500)));
        h.insert("retry-after", HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(77)));
        h.insert("retry-after", HeaderValue::from_static("Sun, 06 Nov 1994 08:00:00 GMT"));
        assert_eq!(
            retry_after(&h, now),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
    }

    #[test]
    fn http_dates_in_all_three_formats() {
        let expected = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(expected));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), Some(expected));
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), Some(expected));
        assert_eq!(
            parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(SystemTime::UNIX_EPOCH)
        );
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_835_438_400))
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 25:00:00 GMT"), None);
        assert_eq!(parse_http_date("06 1994 08:49:37"), None);
        assert_eq!(parse_http_date(""), None);
    }

    #[test]
    fn retryable_statuses() {
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s), "{s}");
        }
        for s in [200, 400, 401, 403, 404, 413, 422] {
            assert!(!is_retryable_status(s), "{s}");
        }
    }

    #[test]
    fn should_retry_header_values() {
        let mut h = HeaderMap::new();
        assert_eq!(should_retry_header(&h), None);
        h.insert("x-should-retry", HeaderValue::from_static("false"));
        assert_eq!(should_retry_header(&h), Some(false));
        h.insert("x-should-retry", HeaderValue::from_static("true"));
        assert_eq!(should_retry_header(&h), Some(true));
    }

    #[tokio::test(start_paused = true)]
    async fn retries_until_success_and_announces_each_retry() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let calls = AtomicU32::new(0);
        let result = run(&policy(5), &tx, &CancellationToken::new(), |n| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 3 {
                    Err(Failure::from(ProviderError::Connect("refused".into())))
                } else {
                    Ok(done())
                }
            }
        })
        .await;
        assert_eq!(result.unwrap().content, "ok");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        let mut attempts = Vec::new();
        while let Ok(ProviderEvent::Retrying {
            attempt,
            max_attempts,
            reason,
            ..
        }) = rx.try_recv()
        {
            assert_eq!(max_attempts, 5);
            assert!(reason.contains("refused"), "{reason}");
            attempts.push(attempt);
        }
        assert_eq!(attempts, vec![2, 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_after_max_attempts() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let result = run(&policy(3), &tx, &CancellationToken::new(), |_| async {
            Err(Failure::from(ProviderError::Http {
                status: 503,
                body: "busy".into(),
            }))
        })
        .await;
        match result {
            Err(ProviderError::RetriesExhausted { attempts: 3, last }) => {
                assert!(matches!(*last, ProviderError::Http { status: 503, .. }));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn permanent_errors_and_server_verdicts() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let err = run(&policy(5), &tx, &cancel, |_| async {
            Err(Failure::from(ProviderError::Http {
                status: 400,
                body: "bad".into(),
            }))
        })
        .await;
        assert!(matches!(err, Err(ProviderError::Http { status: 400, .. })));
        let err = run(&policy(5), &tx, &cancel, |_| async {
            Err(Failure {
                should_retry: Some(false),
                ..Failure::from(ProviderError::Http {
                    status: 500,
                    body: "no".into(),
                })
            })
        })
        .await;
        assert!(matches!(err, Err(ProviderError::Http { status: 500, .. })));
        assert!(rx.try_recv().is_err(), "nothing was retried");
    }

    #[tokio::test(start_paused = true)]
    async fn cancellation_interrupts_the_pause() {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let slow = RetryPolicy {
            max_delay: Duration::from_secs(60),
            ..policy(5)
        };
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            trigger.cancel();
        });
        let started = tokio::time::Instant::now();
        let result = run(&slow, &tx, &cancel, |_| async {
            Err(Failure {
                retry_after: Some(Duration::from_secs(30)),
                ..Failure::from(ProviderError::Http {
                    status: 429,
                    body: "slow down".into(),
                })
            })
        })
        .await;
        assert!(matches!(result, Err(ProviderError::Cancelled)));
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
