//! robots.txt, for fetches the model makes (the tool), not for those the user asks for (the
//! prompt), as the original decides.
//!
//! The file is fetched from the URL's origin with the autonomous user agent; 401 and 403 mean
//! no autonomous fetching, any other 4xx means no robots.txt (everything allowed), and a
//! connection failure means the page is not fetched. The rules are matched by `texting_robots`
//! (RFC 9309: the longest matching rule wins, `Allow` on a tie, `*` and `$` in patterns). Which
//! group applies is chosen as the original's parser chooses it: the group whose user-agent name
//! appears in our whole `User-Agent` at a word boundary (the longest such name), otherwise `*`.

use reqwest::Url;

use crate::client::{Http, ROBOTS_MAX_BYTES, RequestError};

/// Why the page may not be fetched autonomously: the original's messages, word for word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Denied {
    /// The robots.txt request failed.
    Unreachable { robots_url: Url },
    /// The robots.txt request was answered 401 or 403.
    Forbidden { robots_url: Url, status: u16 },
    /// robots.txt disallows the page for our user agent.
    Disallowed {
        robots_url: Url,
        user_agent: String,
        url: Url,
        robots_txt: String,
    },
    /// The guard refused the robots.txt request's address (its message as it is).
    Refused(String),
}

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unreachable { robots_url } => write!(
                f,
                "Failed to fetch robots.txt {robots_url} due to a connection issue"
            ),
            Self::Forbidden { robots_url, status } => write!(
                f,
                "When fetching robots.txt ({robots_url}), received status {status} so assuming \
                 that autonomous fetching is not allowed, the user can try manually fetching by \
                 using the fetch prompt"
            ),
            Self::Disallowed {
                robots_url,
                user_agent,
                url,
                robots_txt,
            } => write!(
                f,
                "The sites robots.txt ({robots_url}), specifies that autonomous fetching of this \
                 page is not allowed, <useragent>{user_agent}</useragent>\n<url>{url}</url>\
                 <robots>\n{robots_txt}\n</robots>\nThe assistant must let the user know that it \
                 failed to view the page. The assistant may provide further guidance based on \
                 the above information.\nThe assistant can tell the user that they can try \
                 manually fetching the page by using the fetch prompt within their UI."
            ),
            Self::Refused(message) => f.write_str(message),
        }
    }
}

/// The robots.txt of `url`'s origin: its scheme, user, password, host and port, and the path
/// `/robots.txt`.
pub(crate) fn robots_url(url: &Url) -> Url {
    let mut robots = url.clone();
    robots.set_path("/robots.txt");
    robots.set_query(None);
    robots.set_fragment(None);
    robots
}

/// Whether `user_agent` may fetch `url` autonomously, by its site's robots.txt.
pub(crate) async fn check(http: &Http, url: &Url, user_agent: &str) -> Result<(), Denied> {
    let robots_url = robots_url(url);
    let unreachable = || Denied::Unreachable {
        robots_url: robots_url.clone(),
    };
    if !matches!(url.scheme(), "http" | "https") {
        return Err(unreachable());
    }
    // Redirects of robots.txt itself are followed without a robots.txt check of their own.
    let fetched = http
        .get(&robots_url, user_agent, true, |_| async { Ok(()) })
        .await
        .map_err(|error| match error {
            RequestError::Refused { url, refused } => Denied::Refused(refused.message(&url)),
            _ => unreachable(),
        })?;
    let status = fetched.status().as_u16();
    if status == 401 || status == 403 {
        return Err(Denied::Forbidden { robots_url, status });
    }
    if (400..500).contains(&status) {
        return Ok(());
    }
    let robots_txt = fetched
        .text(ROBOTS_MAX_BYTES, true)
        .await
        .map_err(|_| unreachable())?;
    if allowed(&robots_txt, url, user_agent) {
        Ok(())
    } else {
        Err(Denied::Disallowed {
            robots_url,
            user_agent: user_agent.to_owned(),
            url: url.clone(),
            robots_txt,
        })
    }
}

/// Whether `robots_txt` lets `user_agent` fetch `url`. A file the parser cannot read at all
/// sets no rules.
pub(crate) fn allowed(robots_txt: &str, url: &Url, user_agent: &str) -> bool {
    // Comment lines go first, as the original drops them before parsing.
    let rules: String = robots_txt
        .lines()
        .filter(|line| !line.trim().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let group = group_for(&rules, user_agent);
    match texting_robots::Robot::new(&group, rules.as_bytes()) {
        Ok(robot) => robot.allowed(url.as_str()),
        Err(_) => true,
    }
}

/// The user-agent name of the group that applies to `user_agent`: the longest name of a
/// `User-agent` line that appears in it (case-insensitively) where a word starts, or `*`.
fn group_for(rules: &str, user_agent: &str) -> String {
    let agent = user_agent.trim().to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for line in rules.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        let Some((field, value)) = line.split_once(':') else {
            continue;
        };
        let field = field.trim().to_ascii_lowercase();
        if !matches!(field.as_str(), "user-agent" | "useragent" | "user agent") {
            continue;
        }
        let name = value.trim();
        let lower = name.to_lowercase();
        if lower.is_empty() || lower == "*" || !appears_at_word_start(&agent, &lower) {
            continue;
        }
        // The first of the longest, as the original's `max` keeps it.
        if best.is_none_or(|(length, _)| lower.len() > length) {
            best = Some((lower.len(), name));
        }
    }
    best.map_or_else(|| "*".to_owned(), |(_, name)| name.to_owned())
}

/// Whether `name` occurs in `agent` where the character before it (if any) is not a letter,
/// digit, `-` or `_`.
fn appears_at_word_start(agent: &str, name: &str) -> bool {
    agent.match_indices(name).any(|(at, _)| {
        agent
            .get(..at)
            .and_then(|before| before.chars().next_back())
            .is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUTONOMOUS: &str =
        "ModelContextProtocol/1.0 (Autonomous; +https://github.com/modelcontextprotocol/servers)";

    fn url(text: &str) -> Url {
        Url::parse(text).expect("a URL")
    }

    #[test]
    fn robots_url_keeps_the_origin() {
        assert_eq!(
            robots_url(&url("https://user:pw@example.com:8443/a/b?q=1#f")).as_str(),
            "https://user:pw@example.com:8443/robots.txt"
        );
    }

    #[test]
    fn the_group_naming_us_applies_else_star() {
        let txt = "User-agent: *\nDisallow: /private\n\nUser-agent: ModelContextProtocol\nDisallow: /mcp\n";
        assert!(!allowed(txt, &url("http://h/mcp/x"), AUTONOMOUS));
        // Our group replaces `*`'s.
        assert!(allowed(txt, &url("http://h/private"), AUTONOMOUS));
        assert!(!allowed(txt, &url("http://h/private"), "OtherBot/2.0"));
        assert!(allowed(txt, &url("http://h/mcp/x"), "OtherBot/2.0"));
        // A name inside another word does not count: `Protocol` is not a word of ours.
        let txt = "User-agent: Protocol\nDisallow: /\n";
        assert!(allowed(txt, &url("http://h/x"), AUTONOMOUS));
        // Any word of the whole header does, as in the original.
        let txt = "User-agent: Autonomous\nDisallow: /\n";
        assert!(!allowed(txt, &url("http://h/x"), AUTONOMOUS));
    }

    #[test]
    fn longest_rule_wins_and_wildcards() {
        let txt = "User-agent: *\nDisallow: /docs\nAllow: /docs/public\nDisallow: /*.pdf$\n";
        assert!(!allowed(txt, &url("http://h/docs/x"), AUTONOMOUS));
        assert!(allowed(txt, &url("http://h/docs/public/x"), AUTONOMOUS));
        assert!(!allowed(txt, &url("http://h/a/b.pdf"), AUTONOMOUS));
        assert!(allowed(txt, &url("http://h/a/b.pdf?x"), AUTONOMOUS));
        assert!(allowed(txt, &url("http://h/robots.txt"), AUTONOMOUS));
    }

    #[test]
    fn hostile_files_set_no_rules_or_their_rules_and_never_panic() {
        let long_rule = format!("User-agent: *\nDisallow: /{}\n", "*a".repeat(50_000));
        let texts = [
            "",
            "\u{feff}User-agent: *\nDisallow: /",
            "User-agent: é\u{a0}:\u{a0}\nDisallow: /é\u{a0}%zz%e9",
            "Disallow: /\nUser-agent",
            "\0\0\0User-agent: *\0Disallow: /\0",
            "User-agent: *\nDisallow: /€*$*$*\n",
            long_rule.as_str(),
        ];
        for text in texts {
            let _ = allowed(text, &url("http://h/é?x=€"), AUTONOMOUS);
        }
        assert!(!allowed(
            "\u{feff}User-agent: *\nDisallow: /",
            &url("http://h/x"),
            AUTONOMOUS
        ));
    }

    #[test]
    fn comment_lines_are_dropped() {
        let txt = "# User-agent: ModelContextProtocol\nUser-agent: *\nDisallow: /x # trailing\n";
        assert!(!allowed(txt, &url("http://h/x"), AUTONOMOUS));
    }
}
