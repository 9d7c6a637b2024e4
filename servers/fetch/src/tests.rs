//! The tool and the prompt through the in-process client, against a small HTTP server on
//! 127.0.0.1 that records what it was asked: robots.txt, user agents, redirects, pagination,
//! the refusal of private addresses (direct, by name, and on a redirect hop) and the size bound.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_runtime::prelude::*;
use mcp_runtime::testing::Client;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::client::{Http, Network};
use crate::server::{Fetch, USER_AGENT_AUTONOMOUS, USER_AGENT_MANUAL, paginate};

const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>A Test Article</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article>
<h1>A Test Article</h1>
<p>The first paragraph has <strong>bold</strong> and <em>italic</em> words, and a <a href="https://example.com/x">link</a>. It is long enough to count as content for the readability scorer, which wants commas, and more than twenty five characters.</p>
<h2>Details</h2>
<p>A second paragraph, also long enough to be content, with commas, and sentences. Readability keeps paragraphs like this one, and drops the navigation around them.</p>
</article>
<footer>Copyright footer</footer>
</body></html>
"#;

const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";

/// The limit the size tests run with.
const SMALL_LIMIT: usize = 1024 * 1024;

/// One request the fixture server received: the request target and the user agent.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    target: String,
    user_agent: String,
}

/// An HTTP/1.1 server on 127.0.0.1 serving fixed pages (and, for requests in absolute form,
/// acting as the proxy that answers them).
#[derive(Clone)]
struct Site {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Bytes of `/big` written before the client stopped reading.
    big_written: Arc<AtomicUsize>,
}

impl Site {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let site = Site {
            port,
            seen: Arc::default(),
            big_written: Arc::default(),
        };
        let serving = site.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serving.clone().answer(stream));
            }
        });
        site
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("log").clone()
    }

    async fn answer(self, mut stream: TcpStream) {
        let mut head = Vec::new();
        let mut byte = [0_u8; 1];
        while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
            match stream.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let target = head.split(' ').nth(1).unwrap_or_default().to_owned();
        let user_agent = head
            .lines()
            .find_map(|l| {
                l.strip_prefix("user-agent: ")
                    .or_else(|| l.strip_prefix("User-Agent: "))
            })
            .unwrap_or_default()
            .to_owned();
        self.seen.lock().expect("log").push(Seen {
            target: target.clone(),
            user_agent,
        });
        // A proxied request names the whole URL; the path is what is served.
        let path = match target.find("://") {
            Some(at) => target
                .get(at + 3..)
                .and_then(|rest| rest.find('/').and_then(|slash| rest.get(slash..)))
                .unwrap_or("/")
                .to_owned(),
            None => target,
        };
        let respond = |status: &str, kind: &str, extra: &str, body: &str| {
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n{body}",
                body.len()
            )
        };
        let reply = match path.as_str() {
            "/robots.txt" => respond("200 OK", "text/plain", "", ROBOTS),
            "/page.html" => respond("200 OK", "text/html; charset=utf-8", "", PAGE),
            "/notes.txt" => respond("200 OK", "text/plain", "", "plain text file\nline two\n"),
            "/latin1.txt" => {
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=iso-8859-1\r\ncontent-length: 4\r\nconnection: close\r\n\r\ncaf\xe9")
                    .await;
                return;
            }
            "/big" => {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                let chunk = vec![b'x'; 64 * 1024];
                // At most 256 MiB, far past any limit the tests set.
                for _ in 0..4096 {
                    if stream.write_all(&chunk).await.is_err() {
                        return;
                    }
                    self.big_written.fetch_add(chunk.len(), Ordering::Relaxed);
                }
                return;
            }
            "/declared" => format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\nx",
                SMALL_LIMIT * 100
            ),
            p if p.starts_with("/redirect?to=") => {
                let to = p.trim_start_matches("/redirect?to=");
                respond(
                    "302 Found",
                    "text/plain",
                    &format!("location: {to}\r\n"),
                    "",
                )
            }
            _ => respond("404 Not Found", "text/plain", "", "not found"),
        };
        let _ = stream.write_all(reply.as_bytes()).await;
    }
}

struct Options {
    allow_private: bool,
    ignore_robots_txt: bool,
    proxy_url: Option<String>,
    max_body_bytes: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            allow_private: true,
            ignore_robots_txt: false,
            proxy_url: None,
            max_body_bytes: 10 * 1024 * 1024,
        }
    }
}

async fn connect(options: Options) -> Client {
    let network = Network {
        proxy_url: options.proxy_url,
        allow_private: options.allow_private,
        max_body_bytes: options.max_body_bytes,
    };
    let fetch = Fetch::new(Http::new(&network), None, options.ignore_robots_txt);
    match Client::connect(fetch.into_server()).await {
        Ok(client) => client,
        Err(error) => panic!("the server did not start: {error}"),
    }
}

async fn call(client: &Client, arguments: Value) -> (bool, String) {
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        client.call_tool("fetch", arguments),
    )
    .await
    .expect("the call answers within a minute")
    .expect("tools/call");
    (result.is_error, result.text())
}

#[tokio::test]
async fn lists_the_tool_and_the_prompt_as_the_original() {
    let client = connect(Options::default()).await;
    let tools = client.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool["name"], "fetch");
    assert!(tool["description"].as_str().is_some_and(|d| d.starts_with(
        "Fetches a URL from the internet and optionally extracts its contents as markdown.\n\n"
    )));
    let schema = &tool["inputSchema"];
    assert_eq!(schema["required"], json!(["url"]));
    assert_eq!(schema["properties"]["url"]["format"], "uri");
    assert_eq!(schema["properties"]["max_length"]["default"], 5000);
    assert_eq!(schema["properties"]["max_length"]["minimum"], 1);
    assert_eq!(schema["properties"]["max_length"]["maximum"], 999_999);
    assert_eq!(schema["properties"]["start_index"]["minimum"], 0);
    assert_eq!(schema["properties"]["raw"]["default"], false);
    assert!(tool.get("outputSchema").is_none());
    assert_eq!(
        tool["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
    );
    let prompts = client
        .request("prompts/list", json!({}))
        .await
        .expect("prompts/list");
    assert_eq!(
        prompts["prompts"],
        json!([{
            "name": "fetch",
            "description": "Fetch a URL and extract its contents as markdown",
            "arguments": [{"name": "url", "description": "URL to fetch", "required": true}]
        }])
    );
}

#[tokio::test]
async fn a_page_as_markdown_after_robots_txt() {
    let site = Site::start().await;
    let client = connect(Options::default()).await;
    let (is_error, text) = call(&client, json!({"url": site.url("/page.html")})).await;
    assert!(!is_error, "{text}");
    let expected_start = format!("Contents of {}:\n", site.url("/page.html"));
    assert!(text.starts_with(&expected_start), "{text}");
    assert!(
        text.contains("**bold**") && text.contains("## Details"),
        "{text}"
    );
    assert!(!text.contains("Copyright footer"), "{text}");
    let autonomous = USER_AGENT_AUTONOMOUS.to_owned();
    assert_eq!(
        site.seen(),
        [
            Seen {
                target: "/robots.txt".into(),
                user_agent: autonomous.clone()
            },
            Seen {
                target: "/page.html".into(),
                user_agent: autonomous
            },
        ]
    );
}

#[tokio::test]
async fn robots_txt_refuses_the_tool_but_not_the_prompt() {
    let site = Site::start().await;
    let client = connect(Options::default()).await;
    let (is_error, text) = call(&client, json!({"url": site.url("/private/x")})).await;
    assert!(is_error);
    assert_eq!(
        text,
        format!(
            "Error executing tool fetch: The sites robots.txt ({robots}), specifies that autonomous \
             fetching of this page is not allowed, <useragent>{USER_AGENT_AUTONOMOUS}</useragent>\n\
             <url>{page}</url><robots>\n{ROBOTS}\n</robots>\nThe assistant must let the user know \
             that it failed to view the page. The assistant may provide further guidance based on \
             the above information.\nThe assistant can tell the user that they can try manually \
             fetching the page by using the fetch prompt within their UI.",
            robots = site.url("/robots.txt"),
            page = site.url("/private/x"),
        )
    );
    assert!(site.seen().iter().all(|s| s.target != "/private/x"));

    // A redirect into the disallowed part is checked at its hop.
    let (is_error, text) = call(&client, json!({"url": site.url("/redirect?to=/private/y")})).await;
    assert!(is_error);
    assert!(
        text.contains(&format!("<url>{}</url>", site.url("/private/y"))),
        "{text}"
    );
    assert!(site.seen().iter().all(|s| s.target != "/private/y"));

    // The prompt is the user's own request: no robots.txt, the manual user agent.
    let before = site.seen().len();
    let prompt = client
        .request(
            "prompts/get",
            json!({"name": "fetch", "arguments": {"url": site.url("/private/x")}}),
        )
        .await
        .expect("prompts/get");
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        format!(
            "Failed to fetch {} - status code 404",
            site.url("/private/x")
        )
    );
    assert_eq!(
        site.seen().get(before..).map(<[Seen]>::to_vec),
        Some(vec![Seen {
            target: "/private/x".into(),
            user_agent: USER_AGENT_MANUAL.into()
        }])
    );
}

#[tokio::test]
async fn ignoring_robots_txt() {
    let site = Site::start().await;
    let client = connect(Options {
        ignore_robots_txt: true,
        ..Options::default()
    })
    .await;
    let (is_error, text) = call(&client, json!({"url": site.url("/private/x")})).await;
    assert!(is_error);
    assert_eq!(
        text,
        format!(
            "Error executing tool fetch: Failed to fetch {} - status code 404",
            site.url("/private/x")
        )
    );
    assert_eq!(site.seen().len(), 1);
}

#[tokio::test]
async fn raw_text_in_pages_of_characters() {
    let site = Site::start().await;
    let client = connect(Options::default()).await;
    let url = site.url("/notes.txt");
    let (_, text) = call(
        &client,
        json!({"url": url, "max_length": 5, "start_index": 2}),
    )
    .await;
    assert_eq!(
        text,
        format!(
            "Content type text/plain cannot be simplified to markdown, but here is the raw content:\n\
             Contents of {url}:\nain t\n\n<error>Content truncated. Call the fetch tool with a \
             start_index of 7 to get more content.</error>"
        )
    );
    let (_, text) = call(&client, json!({"url": url, "start_index": 1000})).await;
    assert!(
        text.ends_with(":\n<error>No more content available.</error>"),
        "{text}"
    );
    let (_, text) = call(&client, json!({"url": site.url("/latin1.txt")})).await;
    assert!(text.ends_with(":\ncafé"), "{text}");
    let (is_error, text) = call(&client, json!({"url": url, "max_length": 0})).await;
    assert!(is_error && text.contains("max_length"), "{text}");
}

#[test]
fn pages_count_characters_not_bytes() {
    assert_eq!(
        paginate("héllo wörld", 1, 4),
        "éllo\n\n<error>Content truncated. Call the fetch tool with a start_index of 5 to get more content.</error>"
    );
    assert_eq!(paginate("héllo", 1, 4), "éllo");
    assert_eq!(
        paginate("héllo", 5, 4),
        "<error>No more content available.</error>"
    );
    assert_eq!(
        paginate("héllo", u64::MAX, 4),
        "<error>No more content available.</error>"
    );
    assert_eq!(paginate("日本語", 0, 999_999), "日本語");
}

#[tokio::test]
async fn private_addresses_are_refused_by_default() {
    let site = Site::start().await;
    let client = connect(Options {
        allow_private: false,
        ..Options::default()
    })
    .await;
    let refusal = |url: &str, host: &str, address: &str| {
        format!(
            "Error executing tool fetch: Refused to fetch {url}: {host} resolves to {address}, which \
             is not a public address. Start the server with --allow-private-ips to allow private, \
             loopback and link-local addresses."
        )
    };
    // robots.txt is the first request, and is refused first.
    let (is_error, text) = call(&client, json!({"url": site.url("/page.html")})).await;
    assert!(is_error);
    assert_eq!(
        text,
        refusal(&site.url("/robots.txt"), "127.0.0.1", "127.0.0.1")
    );
    // By name: the resolver refuses before connecting.
    let by_name = format!("http://localhost:{}/page.html", site.port);
    let (is_error, text) = call(&client, json!({"url": by_name})).await;
    assert!(is_error);
    let robots_by_name = format!("http://localhost:{}/robots.txt", site.port);
    assert!(
        text.starts_with(&format!(
            "Error executing tool fetch: Refused to fetch {robots_by_name}: localhost resolves to "
        )),
        "{text}"
    );
    // Other spellings of loopback, and the prompt.
    for url in [
        format!("http://2130706433:{}/", site.port),
        format!("http://[::ffff:127.0.0.1]:{}/", site.port),
    ] {
        let (is_error, text) = call(&client, json!({"url": url})).await;
        assert!(
            is_error && text.contains("which is not a public address"),
            "{text}"
        );
    }
    let prompt = client
        .request(
            "prompts/get",
            json!({"name": "fetch", "arguments": {"url": site.url("/page.html")}}),
        )
        .await
        .expect("prompts/get");
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        refusal(&site.url("/page.html"), "127.0.0.1", "127.0.0.1")
            .trim_start_matches("Error executing tool fetch: ")
    );
    assert_eq!(site.seen(), [], "a refused request reached the server");
}

#[tokio::test]
async fn a_redirect_hop_to_a_private_address_is_refused() {
    // The site is also the proxy: the first URL's name resolves nowhere here, so only the
    // proxy can reach it, and its answer redirects to loopback.
    let site = Site::start().await;
    let client = connect(Options {
        allow_private: false,
        ignore_robots_txt: true,
        proxy_url: Some(site.url("")),
        ..Options::default()
    })
    .await;
    let target = site.url("/page.html");
    let start = format!("http://upstream.invalid/redirect?to={target}");
    let (is_error, text) = call(&client, json!({"url": start})).await;
    assert!(is_error);
    assert_eq!(
        text,
        format!(
            "Error executing tool fetch: Refused to fetch {target}: 127.0.0.1 resolves to \
             127.0.0.1, which is not a public address. Start the server with --allow-private-ips \
             to allow private, loopback and link-local addresses."
        )
    );
    let seen: Vec<String> = site.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(seen, [start]);
}

#[tokio::test]
async fn bodies_past_the_bound_are_refused_without_being_read() {
    let site = Site::start().await;
    let client = connect(Options {
        ignore_robots_txt: true,
        max_body_bytes: SMALL_LIMIT,
        ..Options::default()
    })
    .await;
    let too_large = |url: &str| {
        format!(
            "Error executing tool fetch: Failed to fetch {url}: the response is larger than \
             {SMALL_LIMIT} bytes, the most this server reads (--max-body-bytes)"
        )
    };
    let big = site.url("/big");
    let (is_error, text) = call(&client, json!({"url": big, "raw": true})).await;
    assert!(is_error);
    assert_eq!(text, too_large(&big));
    // The server stopped being read soon after the bound: what it wrote is the bound plus what
    // the socket buffers held, far from the 256 MiB it had to send.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let written = site.big_written.load(Ordering::Relaxed);
    assert!(
        written < SMALL_LIMIT + 16 * 1024 * 1024,
        "{written} bytes were written"
    );
    // A Content-Length past the bound is refused before any of the body is read.
    let declared = site.url("/declared");
    let (is_error, text) = call(&client, json!({"url": declared})).await;
    assert!(is_error);
    assert_eq!(text, too_large(&declared));
}
