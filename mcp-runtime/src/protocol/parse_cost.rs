//! What a message costs in memory once parsed, known before it is parsed.
//!
//! A JSON text and the `serde_json::Value` tree built from it differ by up to a hundred times:
//! `[[0],[0],...]` spends four bytes of text on an inner array of four 72-byte slots, and a 16
//! MiB body of such arrays becomes about 1.5 GB. So a request is charged what parsing it will
//! build, and refused before anything is built when that does not fit (see
//! `Server::request_bytes_total`). [`ParseCost::of`] is an upper bound of it, from one scan of
//! the text that counts the values, members, containers and string bytes:
//!
//! - a value is a 72-byte slot in its array, whose capacity may be twice its length, and three
//!   times while it grows (the old and the new buffer): 144 bytes held, 216 at the peak;
//! - an object member is a bucket (hash, key, value: 104 bytes) in a vector that grows the same
//!   way, plus its place in the index: 224 held, 344 at the peak;
//! - a container with anything in it allocates at least four slots or buckets and an index: 544;
//! - a string is its bytes (the text's, which escapes only shorten) and an allocation's
//!   overhead, 32; a string with escapes is first unescaped into a scratch buffer, so the
//!   longest one is counted once more at the peak.
//!
//! The constants come from measuring serde_json 1.x with `preserve_order` (a 72-byte `Value`)
//! under glibc's allocator; `tests/parse_cost.rs` checks the bound against what hostile shapes
//! allocate.
//! Most messages are a few hundred bytes: for them a cheaper bound, one table lookup per byte
//! (which also counts the openers the nesting check needs, so a message is read once before it
//! is parsed), is taken as it is, and the exact scan, which follows strings, runs only for text
//! that bound says may cost more than [`EXACT_ABOVE`].

/// What every message costs beside its values: the envelope's members and the parser's state.
const FIXED: usize = 1024;
/// A value's slot, held / at the peak.
const VALUE: (usize, usize) = (144, 216);
/// An object member's bucket and index entry, held / at the peak.
const MEMBER: (usize, usize) = (224, 344);
/// A non-empty container's first allocation.
const CONTAINER: usize = 544;
/// An allocation's overhead, for each string.
const STRING: usize = 32;

/// Below this cheap bound, the exact scan is not worth its time.
pub(crate) const EXACT_ABOVE: usize = 64 * 1024;

/// What a message of one long string of `n` bytes costs at the peak of parsing beyond `2 * n`
/// (its string, and the scratch copy of it when it has escapes): the envelope around it.
pub(crate) const PARSE_SLACK: usize = 64 * 1024;

/// What parsing one text costs: held by the parsed tree, and at the peak while it is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseCost {
    /// Bytes the parsed tree holds once built (an upper bound).
    pub held: usize,
    /// Bytes allocated at the peak of parsing, the tree included (an upper bound; the text
    /// itself is not counted).
    pub peak: usize,
}

/// What the scan counts.
#[derive(Debug, Default)]
struct Counts {
    values: usize,
    members: usize,
    containers: usize,
    strings: usize,
    string_bytes: usize,
    longest_escaped: usize,
}

impl Counts {
    fn cost(&self) -> ParseCost {
        let base = FIXED
            .saturating_add(self.containers.saturating_mul(CONTAINER))
            .saturating_add(self.strings.saturating_mul(STRING))
            .saturating_add(self.string_bytes);
        let held = base
            .saturating_add(self.values.saturating_mul(VALUE.0))
            .saturating_add(self.members.saturating_mul(MEMBER.0));
        let peak = base
            .saturating_add(self.values.saturating_mul(VALUE.1))
            .saturating_add(self.members.saturating_mul(MEMBER.1))
            .saturating_add(self.longest_escaped);
        ParseCost { held, peak }
    }
}

impl ParseCost {
    /// An upper bound of what parsing `bytes` into a `serde_json::Value` allocates. Text that is
    /// not JSON gets a bound too (parsing it fails, having built less).
    pub fn of(bytes: &[u8]) -> Self {
        scan(bytes).0
    }
}

/// What one byte adds to the cheap bound at the peak, outside strings or in: every byte may be
/// a string's, and its scratch copy's (2); a `,` may start a value; a `:` an object member; an
/// opener a value and a container, and it is counted in the top bits too ([`OPENER`]); two
/// quotes a string.
const WEIGHTS: [u64; 256] = {
    let mut table = [2u64; 256];
    table[b',' as usize] += VALUE.1 as u64;
    table[b':' as usize] += MEMBER.1 as u64;
    table[b'[' as usize] += (VALUE.1 + CONTAINER) as u64 + OPENER;
    table[b'{' as usize] += (VALUE.1 + CONTAINER) as u64 + OPENER;
    table[b'"' as usize] += (STRING / 2) as u64;
    table
};

/// Where the count of openers sits in a sum of [`WEIGHTS`]: above 40 bits of weight (a weight
/// of at most 762 a byte stays below them for text under 1 GiB), with 24 bits of count (text
/// under 16 MiB cannot overflow them).
const OPENER: u64 = 1 << 40;
const WEIGHT_BITS: u64 = OPENER - 1;

/// The cheap bound of what parsing `bytes` costs (exact when that bound is large), and how many
/// `[` and `{` the text has, inside strings or not: what the nesting check needs to know whether
/// it must scan at all.
pub(crate) fn scan(bytes: &[u8]) -> (ParseCost, usize) {
    let (weight, openers) = if bytes.len() < 1 << 24 {
        let sum: u64 = bytes.iter().map(|&b| WEIGHTS[usize::from(b)]).sum();
        (sum & WEIGHT_BITS, sum >> 40)
    } else {
        // Longer text could overflow the packed count: two sums.
        bytes.iter().fold((0u64, 0u64), |(weight, openers), &b| {
            let entry = WEIGHTS[usize::from(b)];
            (weight + (entry & WEIGHT_BITS), openers + (entry >> 40))
        })
    };
    let openers = usize::try_from(openers).unwrap_or(usize::MAX);
    // The root value and one more string than two quotes make.
    let peak = usize::try_from(weight)
        .unwrap_or(usize::MAX)
        .saturating_add(FIXED + VALUE.1 + STRING);
    if peak <= EXACT_ABOVE {
        // Small: held taken as the peak, an upper bound of both.
        return (ParseCost { held: peak, peak }, openers);
    }
    (exact_counts(bytes).cost(), openers)
}

/// Counts from bytes alone, inside strings or not: every `,` or opener may start a value, every
/// `:` a member, every opener a container, every two quotes a string, and every byte may be a
/// string's (twice, for the scratch buffer). [`WEIGHTS`] sums the same in one pass; this spells
/// it out, for the tests.
#[cfg(test)]
fn cheap_counts(bytes: &[u8]) -> Counts {
    let (commas, colons, openers, quotes) =
        bytes
            .iter()
            .fold((0usize, 0usize, 0usize, 0usize), |(c, k, o, q), &b| {
                (
                    c + usize::from(b == b','),
                    k + usize::from(b == b':'),
                    o + usize::from(b == b'[' || b == b'{'),
                    q + usize::from(b == b'"'),
                )
            });
    Counts {
        values: 1 + commas + openers,
        members: colons,
        containers: openers,
        strings: quotes / 2 + 1,
        string_bytes: bytes.len(),
        longest_escaped: bytes.len(),
    }
}

/// Counts from a scan that follows strings: values are the root, and one per element of a
/// non-empty container (a container with `n` of them has `n - 1` commas).
fn exact_counts(bytes: &[u8]) -> Counts {
    let mut counts = Counts {
        values: 1,
        ..Counts::default()
    };
    let mut in_string = false;
    let mut escaped = false;
    let mut string_len = 0usize;
    let mut string_escaped = false;
    // The last byte outside strings and whitespace: an opener right before a closer is an
    // empty container, which allocates nothing.
    let mut last = 0u8;
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
                string_escaped = true;
            } else if byte == b'"' {
                in_string = false;
                counts.string_bytes += string_len;
                if string_escaped {
                    counts.longest_escaped = counts.longest_escaped.max(string_len);
                }
                last = b'"';
                continue;
            }
            string_len += 1;
            continue;
        }
        match byte {
            b'"' => {
                in_string = true;
                string_len = 0;
                string_escaped = false;
                counts.strings += 1;
                if last == b'[' || last == b'{' {
                    counts.containers += 1;
                    counts.values += 1;
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b',' => counts.values += 1,
            b':' => counts.members += 1,
            b']' | b'}' => {}
            _ => {
                if last == b'[' || last == b'{' {
                    counts.containers += 1;
                    counts.values += 1;
                }
            }
        }
        last = byte;
    }
    // An unterminated string still holds its bytes while the parser reads it.
    if in_string {
        counts.string_bytes += string_len;
        counts.longest_escaped = counts.longest_escaped.max(string_len);
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(text: &str) -> Counts {
        exact_counts(text.as_bytes())
    }

    #[test]
    fn the_scan_counts_values_members_containers_and_strings() {
        let c = exact(r#"{"a": [1, 2, {"b": "x,y:z"}], "c": [], "d": {}}"#);
        // The root; the object's three member values; the array's three elements; the inner
        // object's one member value.
        assert_eq!(c.values, 8);
        assert_eq!(c.members, 4);
        // The root object, the array with elements and the inner object; not `[]` or `{}`.
        assert_eq!(c.containers, 3);
        assert_eq!(c.strings, 5);
        assert_eq!(c.string_bytes, 1 + 1 + 5 + 1 + 1);
        assert_eq!(c.longest_escaped, 0);
        let c = exact(r#"["a\"b", "\\"]"#);
        assert_eq!((c.values, c.strings, c.longest_escaped), (3, 2, 4));
    }

    #[test]
    fn the_table_is_the_cheap_counts_and_counts_openers() {
        let text = br#"{"a": [1, {"b": "[x]"}], "c": "\"{"}"#;
        let (cost, openers) = scan(text);
        // In strings or not: the nesting check's first count.
        assert_eq!(openers, 5);
        // Eleven quotes: half a string more than the counts' five and a half.
        let counted = cheap_counts(text).cost().peak;
        assert!(
            cost.peak >= counted && cost.peak <= counted + STRING,
            "{cost:?} {counted}"
        );
        // Long text counts the same way, through the unpacked sums.
        let long = "[".repeat(1 << 24);
        let (cost, openers) = scan(long.as_bytes());
        assert_eq!(openers, 1 << 24);
        assert!(cost.peak > 1 << 24);
    }

    #[test]
    fn the_cheap_bound_is_never_below_the_exact_one() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#,
            r#"[[],[],{},{"a":[0,[0,{}]]}]"#,
            r#"{"a": "[[[,,,::]]]", "b": ["\"", "\\\\"]}"#,
            "",
            "not json at all, {[",
        ] {
            let (cheap, exact) = (cheap_counts(text.as_bytes()).cost(), exact(text).cost());
            assert!(
                cheap.peak >= exact.peak && cheap.held >= exact.held,
                "{text}"
            );
            assert!(exact.peak >= exact.held);
        }
    }

    #[test]
    fn a_long_string_costs_about_its_length_and_small_values_cost_far_more() {
        let string = format!(r#"{{"a":"{}"}}"#, "x".repeat(1 << 20));
        let cost = ParseCost::of(string.as_bytes());
        assert!(cost.held < (1 << 20) + 4096, "{cost:?}");
        let zeros = format!("[{}0]", "0,".repeat(1 << 19));
        let cost = ParseCost::of(zeros.as_bytes());
        assert!(cost.held > 100 * zeros.len() / 2, "{cost:?}");
    }
}
