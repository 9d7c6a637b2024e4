//! Newline-delimited JSON-RPC, as stdio carries it (both directions: the server reads its
//! client's lines, the client its server's): one line at a time, never more than the limit in
//! memory.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

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
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
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

#[cfg(test)]
mod tests {
    use tokio::io::BufReader;

    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
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
}
