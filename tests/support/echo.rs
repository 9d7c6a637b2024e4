//! An HTTP/1.1 server on 127.0.0.1 that answers `tests/openapi/echo.yaml` (and any other API, for
//! the `openapi` example's test): with the request as it arrived (method, target, headers,
//! body, as JSON), except `/status/{code}`, with that
//! status and a long body, `/numbers` with a list, `/big` with 64 KiB, `/slow` after 3 s,
//! `/away` with a redirect to another origin. Each connection is served until it closes; the
//! server lives as long as its runtime.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Starts the server; its address.
pub async fn start() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("a bound address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream));
        }
    });
    addr
}

async fn serve(mut stream: TcpStream) {
    let mut buffer = Vec::new();
    loop {
        let head_end = loop {
            if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
            if buffer.len() > 1 << 20 {
                return;
            }
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let request_line = lines.next().unwrap_or_default().to_owned();
        let mut headers = Map::new();
        let mut length = 0usize;
        for line in lines.filter(|l| !l.is_empty()) {
            if let Some((name, value)) = line.split_once(':') {
                let name = name.trim().to_ascii_lowercase();
                if name == "content-length" {
                    length = value.trim().parse().unwrap_or(0);
                }
                headers.insert(name, Value::from(value.trim()));
            }
        }
        while buffer.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let body = String::from_utf8_lossy(&buffer[head_end..head_end + length]).into_owned();
        buffer.drain(..head_end + length);
        let mut parts = request_line.split(' ');
        let method = parts.next().unwrap_or_default().to_owned();
        let target = parts.next().unwrap_or_default().to_owned();
        let path = target.split('?').next().unwrap_or_default().to_owned();
        let echo = json!({"method": method, "target": target, "headers": headers, "body": body});
        let (status, extra, content) = if let Some(code) = path.strip_prefix("/status/") {
            let code: u16 = code.parse().unwrap_or(500);
            let body = format!(
                "{{\"error\":\"status {code}\",\"detail\":\"{}\"}}",
                "é".repeat(3000)
            );
            (code, String::new(), body)
        } else if path == "/numbers" {
            (200, String::new(), "[1,2,3]".to_owned())
        } else if path == "/big" {
            (200, String::new(), format!("\"{}\"", "x".repeat(64 * 1024)))
        } else if path == "/slow" {
            tokio::time::sleep(Duration::from_secs(3)).await;
            (200, String::new(), "\"late\"".to_owned())
        } else if path == "/away" {
            (
                302,
                "Location: http://127.0.0.2:9/elsewhere\r\n".to_owned(),
                String::new(),
            )
        } else {
            (200, String::new(), echo.to_string())
        };
        let response = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n{content}",
            content.len()
        );
        if stream.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}
