//! The HTTP side: one `reqwest` client over rustls, redirects followed here hop by hop (each hop
//! checked against the address guard and, for the tool, against its site's robots.txt), and
//! bodies read in chunks up to a bound, never whole past it.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, LOCATION, USER_AGENT};
use reqwest::{Client, Proxy, Response, StatusCode, Url};

use crate::guard::{self, GuardedResolver, Refused};

/// How many redirects one fetch follows (as many as the original's HTTP client).
pub(crate) const MAX_REDIRECTS: usize = 20;

/// The largest robots.txt read; past it the file is cut there and what was read is obeyed
/// (RFC 9309 asks crawlers to parse at least 500 KiB).
pub(crate) const ROBOTS_MAX_BYTES: usize = 512 * 1024;

/// What the server was started with that decides how it connects.
#[derive(Debug, Clone, Default)]
pub(crate) struct Network {
    /// `--proxy-url`: every request through this proxy.
    pub(crate) proxy_url: Option<String>,
    /// `--allow-private-ips`: no address guard.
    pub(crate) allow_private: bool,
    /// The largest response body read, in bytes.
    pub(crate) max_body_bytes: usize,
}

/// Why a request produced no response to use.
#[derive(Debug)]
pub(crate) enum RequestError {
    /// The host is, or resolves to, an address that is not public.
    Refused { url: Url, refused: Refused },
    /// The client could not be set up from the proxy settings.
    Setup(String),
    /// No response: the connection, TLS, a timeout, too many redirects, a bad redirect.
    Transport(String),
    /// The body is longer than the bound.
    TooLarge(usize),
    /// A check the caller makes on each redirect hop failed (robots.txt); its message as is.
    Hop(String),
}

/// A response whose body has not been read yet.
pub(crate) struct Fetched {
    pub(crate) response: Response,
}

/// The two clients (pages, and robots.txt with shorter timeouts) and how to use them.
pub(crate) struct Http {
    pages: Result<Client, String>,
    robots: Result<Client, String>,
    /// A proxy is configured: a target's name is resolved by the proxy, so it is looked up and
    /// checked here before each request.
    proxied: bool,
    allow_private: bool,
    max_body_bytes: usize,
}

impl Http {
    /// The clients for `network`. A proxy setting that cannot be used is kept as the error
    /// every fetch then reports, as the original does.
    pub(crate) fn new(network: &Network) -> Self {
        let proxies = proxies(network.proxy_url.as_deref());
        let proxied = !matches!(&proxies, Ok(list) if list.is_empty());
        let build = |connect: Duration, read: Duration, total: Duration| {
            let proxies = proxies.clone()?;
            let mut builder = Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(connect)
                .read_timeout(read)
                .timeout(total);
            if !network.allow_private {
                let hosts = proxies.iter().map(|(host, _)| host.clone());
                builder =
                    builder.dns_resolver(std::sync::Arc::new(GuardedResolver::exempting(hosts)));
            }
            for (_, proxy) in proxies {
                builder = builder.proxy(proxy);
            }
            builder.build().map_err(|error| setup_error(&error))
        };
        Self {
            // The original's page timeout is 30 s for each phase; the whole request is bounded
            // too, so a server trickling bytes cannot hold a call for ever.
            pages: build(
                Duration::from_secs(30),
                Duration::from_secs(30),
                Duration::from_secs(120),
            ),
            // And 5 s for robots.txt (its client's default).
            robots: build(
                Duration::from_secs(5),
                Duration::from_secs(5),
                Duration::from_secs(30),
            ),
            proxied,
            allow_private: network.allow_private,
            max_body_bytes: network.max_body_bytes,
        }
    }

    /// The largest page body read.
    pub(crate) fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// GETs `url` as `user_agent`, following redirects; `each_hop` is awaited before every
    /// request after the first (the tool's robots.txt check of the hop).
    pub(crate) async fn get<F, Fut>(
        &self,
        url: &Url,
        user_agent: &str,
        robots_txt: bool,
        mut each_hop: F,
    ) -> Result<Fetched, RequestError>
    where
        F: FnMut(Url) -> Fut,
        Fut: Future<Output = Result<(), String>>,
    {
        let client = if robots_txt {
            &self.robots
        } else {
            &self.pages
        };
        let client = client
            .as_ref()
            .map_err(|e| RequestError::Setup(e.clone()))?;
        let mut url = url.clone();
        for hop in 0..=MAX_REDIRECTS {
            if hop > 0 {
                each_hop(url.clone()).await.map_err(RequestError::Hop)?;
            }
            self.check(&url).await?;
            let response = client
                .get(url.clone())
                .header(USER_AGENT, user_agent)
                .send()
                .await
                .map_err(|error| classify(&url, &error))?;
            match redirect_target(&url, &response) {
                Some(Ok(next)) => url = next,
                Some(Err(message)) => return Err(RequestError::Transport(message)),
                None => return Ok(Fetched { response }),
            }
        }
        Err(RequestError::Transport(format!(
            "more than {MAX_REDIRECTS} redirects"
        )))
    }

    /// The guard's checks that happen before a request: an address literal (which no resolver
    /// sees), and, behind a proxy, the target's addresses looked up here.
    async fn check(&self, url: &Url) -> Result<(), RequestError> {
        if self.allow_private {
            return Ok(());
        }
        let checked = if self.proxied {
            guard::check_by_lookup(url).await
        } else {
            guard::check_literal(url)
        };
        checked.map_err(|refused| RequestError::Refused {
            url: url.clone(),
            refused,
        })
    }
}

impl Fetched {
    pub(crate) fn status(&self) -> StatusCode {
        self.response.status()
    }

    /// The Content-Type header, or empty.
    pub(crate) fn content_type(&self) -> String {
        self.response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    }

    /// The body as text, decoded as its charset says (UTF-8 when it says none), reading at most
    /// `limit` bytes: past them, [`RequestError::TooLarge`], or with `truncate` the text of
    /// the first `limit` bytes.
    pub(crate) async fn text(self, limit: usize, truncate: bool) -> Result<String, RequestError> {
        let content_type = self.content_type();
        let url = self.response.url().clone();
        let mut response = self.response;
        if !truncate
            && let Some(length) = response.content_length()
            && length > limit as u64
        {
            return Err(RequestError::TooLarge(limit));
        }
        let mut body: Vec<u8> = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| classify(&url, &error))?
        {
            let room = limit - body.len();
            if chunk.len() > room {
                if !truncate {
                    return Err(RequestError::TooLarge(limit));
                }
                body.extend_from_slice(chunk.get(..room).unwrap_or_default());
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(decode(&body, &content_type))
    }
}

/// `bytes` as text in the charset `content_type` names (UTF-8 when it names none or one
/// unknown), malformed sequences replaced, a byte order mark kept as the original keeps it.
pub(crate) fn decode(bytes: &[u8], content_type: &str) -> String {
    let encoding = charset(content_type)
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode_without_bom_handling(bytes).0.into_owned()
}

/// The `charset` parameter of a Content-Type value.
fn charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// Where a redirect leads: `None` for a response that is not one.
fn redirect_target(url: &Url, response: &Response) -> Option<Result<Url, String>> {
    let status = response.status();
    if !matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    ) {
        return None;
    }
    let location = response.headers().get(LOCATION)?;
    let Ok(location) = location.to_str() else {
        return Some(Err(format!(
            "the redirect from {url} has a Location that is not text"
        )));
    };
    Some(url.join(location).map_err(|error| {
        format!("the redirect from {url} leads to a URL that does not parse ({error})")
    }))
}

/// A failed request as what it means here: the guard's refusal (found among the error's
/// sources, where the resolver's error ends up), or the chain of reasons.
fn classify(url: &Url, error: &reqwest::Error) -> RequestError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        if let Some(refused) = current.downcast_ref::<Refused>() {
            return RequestError::Refused {
                url: url.clone(),
                refused: refused.clone(),
            };
        }
        source = current.source();
    }
    RequestError::Transport(reasons(error))
}

/// An error and its sources, one after the other: "error sending request ...: connection
/// refused".
fn reasons(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(current) = source {
        let next = current.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = current.source();
    }
    text
}

fn setup_error(error: &reqwest::Error) -> String {
    format!(
        "Failed to set up the HTTP client, check the proxy configuration (--proxy-url or the \
         HTTP_PROXY, HTTPS_PROXY and ALL_PROXY environment variables): {}",
        reasons(error)
    )
}

/// The proxies to use, each with its host name (which the guard lets resolve anywhere):
/// `--proxy-url` for every request, otherwise `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (or
/// their lower-case forms) with `NO_PROXY`. `socks://`, as desktop settings export it, is
/// taken as `socks5://`.
fn proxies(proxy_url: Option<&str>) -> Result<Vec<(String, Proxy)>, String> {
    let invalid = |error: reqwest::Error| setup_error(&error);
    if let Some(url) = proxy_url {
        let url = normalize_proxy_url(url);
        return Ok(vec![(proxy_host(&url), Proxy::all(&url).map_err(invalid)?)]);
    }
    let no_proxy = reqwest::NoProxy::from_env;
    let mut out = Vec::new();
    type MakeProxy = fn(&str) -> reqwest::Result<Proxy>;
    let kinds: [(&str, MakeProxy); 3] = [
        ("HTTP_PROXY", |u| Proxy::http(u)),
        ("HTTPS_PROXY", |u| Proxy::https(u)),
        ("ALL_PROXY", |u| Proxy::all(u)),
    ];
    for (name, make) in kinds {
        let value = std::env::var(name)
            .or_else(|_| std::env::var(name.to_ascii_lowercase()))
            .ok()
            .filter(|v| !v.is_empty());
        if let Some(value) = value {
            let value = normalize_proxy_url(&value);
            let proxy = make(&value).map_err(invalid)?.no_proxy(no_proxy());
            out.push((proxy_host(&value), proxy));
        }
    }
    Ok(out)
}

fn normalize_proxy_url(url: &str) -> String {
    match url.get(..8) {
        Some(scheme) if scheme.eq_ignore_ascii_case("socks://") => {
            format!("socks5://{}", url.get(8..).unwrap_or_default())
        }
        _ => url.to_owned(),
    }
}

fn proxy_host(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets() {
        assert_eq!(decode(b"caf\xe9", "text/html; charset=ISO-8859-1"), "café");
        assert_eq!(decode("café".as_bytes(), "text/html"), "café");
        assert_eq!(decode("café".as_bytes(), ""), "café");
        assert_eq!(decode(b"caf\xe9", "text/plain"), "caf\u{fffd}");
        assert_eq!(decode("x".as_bytes(), "text/plain; charset=\"utf-8\""), "x");
        assert_eq!(decode("x".as_bytes(), "text/plain; charset=nonsense"), "x");
    }

    #[test]
    fn socks_is_socks5() {
        assert_eq!(
            normalize_proxy_url("socks://127.0.0.1:1080"),
            "socks5://127.0.0.1:1080"
        );
        assert_eq!(normalize_proxy_url("SOCKS://h:1"), "socks5://h:1");
        assert_eq!(normalize_proxy_url("http://h:3128"), "http://h:3128");
        assert_eq!(normalize_proxy_url("é"), "é");
    }
}
