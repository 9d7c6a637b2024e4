//! Newline-delimited JSON-RPC, as stdio carries it (both directions: the server reads its
//! client's lines, the client its server's): one line at a time, never more than the limit in
//! memory.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, BufReader};

/// What [`read_line`] found.
pub(crate) enum Line {
    /// A line is in the buffer (without its newline).
    Complete,
    /// The line was longer than the limit and was skipped; its length (the buffer holds its
    /// first [`TOO_LONG_HEAD`] bytes).
    TooLong(usize),
    /// The input has ended.
    End,
}

/// How much of a line over the limit is kept: enough for the id, which comes first in what
/// clients send.
pub(crate) const TOO_LONG_HEAD: usize = 4096;

/// Reads one line into `buf` (without its newline or a `\r` before it), keeping at most `max`
/// bytes: a longer line is skipped to its end, its head kept for the id an error can name.
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Line> {
    buf.clear();
    let mut length = 0usize;
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // A last line without a newline still counts.
            return Ok(match (length, too_long) {
                (0, _) => Line::End,
                (_, true) => Line::TooLong(length),
                (_, false) => Line::Complete,
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(newline) => (&available[..newline], Some(newline + 1)),
            None => (available, None),
        };
        length += chunk.len();
        if !too_long {
            if length > max {
                too_long = true;
                // The head is kept for the id an error can name.
                buf.extend_from_slice(
                    chunk
                        .get(..TOO_LONG_HEAD.saturating_sub(buf.len()))
                        .unwrap_or(chunk),
                );
                buf.truncate(TOO_LONG_HEAD);
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(if too_long {
                Line::TooLong(length)
            } else {
                Line::Complete
            });
        }
    }
}

/// Takes the next line into `buf` when `reader` holds all of it already, within `max` bytes:
/// what [`read_line`] would read, without a future, so a burst of buffered lines costs no
/// waiting machinery. `false` when the line is not buffered whole, or is too long, and
/// [`read_line`] reads it.
pub(crate) fn buffered_line<R: tokio::io::AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> bool {
    let available = reader.buffer();
    let Some(newline) = memchr::memchr(b'\n', available) else {
        return false;
    };
    if newline > max {
        return false;
    }
    buf.clear();
    buf.extend_from_slice(&available[..newline]);
    reader.consume(newline + 1);
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    true
}

#[cfg(test)]
mod tests {
    use tokio::io::BufReader;

    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        read_lines(input, 4, max, false).await
    }

    /// Every line of `input`, read through a buffer of `capacity` bytes; with `buffered`, as the
    /// stdio transport reads them: a line held whole in the buffer taken at once.
    async fn read_lines(input: &[u8], capacity: usize, max: usize, buffered: bool) -> Vec<String> {
        let mut reader = BufReader::with_capacity(capacity, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            if buffered && buffered_line(&mut reader, &mut buf, max) {
                out.push(String::from_utf8(buf.clone()).unwrap());
                continue;
            }
            match read_line(&mut reader, &mut buf, max).await.unwrap() {
                Line::End => return out,
                Line::Complete => out.push(String::from_utf8(buf.clone()).unwrap()),
                Line::TooLong(n) => out.push(format!("<{n} bytes>")),
            }
        }
    }

    #[tokio::test]
    async fn lines_split_on_newlines_and_skip_oversized_ones() {
        assert_eq!(lines(b"ab\r\ncd\n", 10).await, ["ab", "cd"]);
        assert_eq!(
            lines(b"0123456789abc\nok\nlast", 10).await,
            ["<13 bytes>", "ok", "last"]
        );
    }

    #[tokio::test]
    async fn a_buffered_line_is_the_line_read_line_reads() {
        let input = b"cd\nab\r\n0123456789abc\n0123456789\n\nok\nlast";
        let expected = ["cd", "ab", "<13 bytes>", "0123456789", "", "ok", "last"];
        for capacity in [1, 3, 8, 64] {
            assert_eq!(read_lines(input, capacity, 10, true).await, expected);
            assert_eq!(read_lines(input, capacity, 10, false).await, expected);
        }
    }
}
