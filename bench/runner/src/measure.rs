//! Small measuring tools: latency samples, percentiles, medians, resident memory.

use std::time::{Duration, Instant};

/// The outcome of one load run: how many calls, how long, each call's latency.
pub struct Run {
    pub calls: usize,
    pub elapsed: Duration,
    /// Latencies in nanoseconds.
    pub latencies: Vec<u64>,
    /// Replies that were JSON-RPC errors or `isError: true`.
    pub errors: usize,
}

impl Run {
    pub fn new(capacity: usize) -> Self {
        Self {
            calls: 0,
            elapsed: Duration::ZERO,
            latencies: Vec::with_capacity(capacity),
            errors: 0,
        }
    }

    pub fn record(&mut self, sent: Instant, reply: &[u8]) {
        self.latencies.push(sent.elapsed().as_nanos() as u64);
        self.calls += 1;
        if !reply_ok(reply) {
            self.errors += 1;
        }
    }

    pub fn per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `q` quantile (0..=1) of the latencies, in microseconds.
    pub fn percentile_us(&mut self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        self.latencies.sort_unstable();
        let rank = ((self.latencies.len() as f64 - 1.0) * q).round() as usize;
        self.latencies[rank] as f64 / 1_000.0
    }
}

/// Whether a reply (a JSON line, or an HTTP body that may be SSE) carries a successful result.
pub fn reply_ok(reply: &[u8]) -> bool {
    contains(reply, b"\"result\"")
        && !contains(reply, b"\"isError\":true")
        && !contains(reply, b"\"error\":{")
}

pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The numeric JSON-RPC `id` of a reply line (the first `"id":` in it).
pub fn reply_id(line: &[u8]) -> Option<usize> {
    let at = line.windows(5).position(|w| w == b"\"id\":")? + 5;
    let digits = line[at..]
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| b.is_ascii_digit());
    let mut id = 0usize;
    let mut any = false;
    for digit in digits {
        id = id * 10 + usize::from(digit - b'0');
        any = true;
    }
    any.then_some(id)
}

/// The median of some samples (NaN when there are none).
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// `VmRSS` of a process, in KiB, from `/proc/<pid>/status`.
pub fn rss_kib(pid: u32) -> f64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return f64::NAN;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN)
}

/// CPU time (user + system, all threads) a process has used so far, in microseconds, from
/// `/proc/<pid>/stat` (clock ticks of `getconf CLK_TCK`, 100 on Linux).
pub fn cpu_us(pid: u32) -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let ticks = *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    });
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return f64::NAN;
    };
    // Fields after the `(comm)`, which may hold spaces: state is field 3, utime 14, stime 15.
    let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
        return f64::NAN;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(user), Some(system)) => (user + system) * 1e6 / ticks,
        _ => f64::NAN,
    }
}

/// The child processes of `pid` (a gateway's upstreams), from `/proc/<pid>/task/*/children`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ids_and_results() {
        assert_eq!(
            reply_id(br#"{"jsonrpc":"2.0","id":42,"result":{}}"#),
            Some(42)
        );
        assert_eq!(reply_id(br#"{"id": 7}"#), Some(7));
        assert_eq!(reply_id(br#"{"id":null}"#), None);
        assert!(reply_ok(br#"{"id":1,"result":{"isError":false}}"#));
        assert!(!reply_ok(br#"{"id":1,"result":{"isError":true}}"#));
        assert!(!reply_ok(br#"{"id":1,"error":{"code":-1}}"#));
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
