//! A POST's body, read within its client's share of the request budget: charged chunk by chunk
//! as it arrives (a declared `Content-Length` holds nothing until its bytes come; a body that is
//! whole in its first chunk, as most are, is charged together with its parse cost), then, before
//! it is parsed, charged what parsing it will build ([`ParseCost`](crate::protocol::ParseCost), an upper bound from one scan
//! of the text); once parsed, only what the parsed message holds stays charged, until the
//! request ends. A body that finds the budget (or its client's share) full may go on on a small
//! reserve of its own when it is small, for the messages that hold nothing once handled (`ping`,
//! `initialize`, notifications, responses, `server/discover`): those are never refused for lack
//! of room someone else holds.

use std::sync::Arc;

use axum::body::{Bytes, HttpBody};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use futures_util::FutureExt as _;

use super::{HttpState, error_response, json_response};
use crate::protocol::{ErrorObject, Scanned, encode_error, scan};
use crate::server::{Charge, Client, HttpOptions, REQUEST_OVERHEAD};

/// 503 with `Retry-After` and -32024 (`Unavailable`): the request budget (or the client's share
/// of it) has no room now.
#[cold]
fn busy() -> Response {
    tracing::warn!("HTTP requests in flight are at their budget: a request gets 503");
    let error = ErrorObject::unavailable(
        "the server is busy; try again shortly",
        std::time::Duration::from_secs(1),
    );
    let mut response = json_response(StatusCode::SERVICE_UNAVAILABLE, encode_error(None, &error));
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// 413 for a request that would hold more than its client may, however long it waited: its
/// text, or (its JSON values costing far more than their text) what parsing it builds.
#[cold]
fn never_fits(needs: usize, cap: usize) -> Response {
    tracing::warn!(
        needs,
        cap,
        "a request would hold more than one client may: 413"
    );
    json_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        encode_error(
            None,
            &ErrorObject::invalid_request(format!(
                "the message would hold {needs} bytes with what parsing it builds (JSON values \
                 cost far more than their text), more than one client may hold ({cap}): send \
                 less, or fewer small values"
            )),
        ),
    )
}

/// The reserve for messages that hold nothing once handled: 4 MiB for all clients.
pub(super) const CONTROL_TOTAL: usize = 4 * 1024 * 1024;
/// The longest body read on the reserve.
const CONTROL_BODY: usize = 64 * 1024;
/// What the largest message on the reserve may hold at its peak (its text, what parsing it
/// builds, its request's overhead): one client's share of the reserve is never less.
pub(super) const CONTROL_LARGEST: usize =
    3 * CONTROL_BODY + crate::protocol::PARSE_SLACK + REQUEST_OVERHEAD;

/// A POST's body, read within its client's share of the request budget (or the reserve).
pub(super) struct ReadBody {
    bytes: Bytes,
    charge: Held,
    /// Bytes of the body not charged yet: a body that came whole in one chunk is charged with
    /// what parsing it builds, in one step (see [`ReadBody::parse`]).
    uncharged: usize,
}

/// What a request holds, and where from.
pub(super) struct Held {
    charge: Charge,
    /// Read on the control reserve: only a message that holds nothing once handled may go on.
    reserve: bool,
    /// On the reserve because it could never fit the request budget (what it needs, and what
    /// its client may hold): a message that holds something is 413, not 503.
    never_fits: Option<(usize, usize)>,
}

impl Held {
    pub(super) fn on_reserve(&self) -> bool {
        self.reserve
    }

    /// The answer to a message on the reserve that would hold something: 413 when it could
    /// never fit its client's share of the request budget, else 503 (try again).
    #[cold]
    pub(super) fn refusal(&self) -> Response {
        match self.never_fits {
            Some((needs, cap)) => never_fits(needs, cap),
            None => busy(),
        }
    }

    pub(super) fn into_charge(self) -> Charge {
        self.charge
    }
}

impl ReadBody {
    /// Parses the body with `parse`, once what parsing builds (an upper bound, before anything
    /// is built) is charged too; then only what the parsed message holds stays charged. 413
    /// when it could never fit one client's share, 503 when it does not fit now, 400 with the
    /// error when it does not parse.
    pub(super) fn parse<T>(
        self,
        (state, client): (&HttpState, Option<&Arc<Client>>),
        max_depth: usize,
        parse: impl FnOnce(&Scanned<'_>) -> Result<T, ErrorObject>,
    ) -> Result<(T, Held), Response> {
        let Self {
            bytes,
            mut charge,
            uncharged,
        } = self;
        let bad =
            |error: ErrorObject| json_response(StatusCode::BAD_REQUEST, encode_error(None, &error));
        // One pass over the text: its nesting, and what parsing it builds.
        let scanned = scan(&bytes, max_depth).map_err(bad)?;
        let cost = scanned.cost;
        if !charge.charge.grow(uncharged.saturating_add(cost.peak)) {
            if charge.reserve {
                return Err(charge.refusal());
            }
            let needs = (charge.charge.bytes())
                .saturating_add(uncharged)
                .saturating_add(cost.peak);
            let cap = charge.charge.cap();
            // A small message may still go on on the reserve, if it holds nothing once handled.
            let never = (needs > cap).then_some((needs, cap));
            // The reserve charges the text it takes over; only what parsing builds is left.
            charge = reserve(state, client, bytes.len(), never)?;
            if !charge.charge.grow(cost.peak) {
                return Err(charge.refusal());
            }
        }
        let parsed = parse(&scanned).map_err(bad)?;
        let text = bytes.len();
        drop(bytes);
        charge.charge.shrink(text + (cost.peak - cost.held));
        Ok((parsed, charge))
    }
}

/// Reads a POST's body within the size limit, its client's share of the request budget and
/// the body-read timeout; the bytes stay charged until the returned charge is dropped.
///
/// The body is hyper's own as the connection hands it over, or axum's through the router.
pub(super) async fn read_post_body<B: HttpBody<Data = Bytes>>(
    state: &HttpState,
    body: B,
    client: Option<&Arc<Client>>,
) -> Result<ReadBody, Response> {
    let options = state.options();
    let reading = read_body(body, state, client);
    // Most bodies are in by the time their headers are: read at once, with no timer to arm.
    let mut reading = std::pin::pin!(reading);
    if let Some(read) = reading.as_mut().now_or_never() {
        return read;
    }
    match tokio::time::timeout(options.body_read_timeout, reading).await {
        Ok(read) => read,
        Err(_) => Err(body_timeout(options)),
    }
}

/// 408 for a body not sent within the body-read timeout; the connection is closed.
#[cold]
fn body_timeout(options: &HttpOptions) -> Response {
    tracing::warn!(timeout = ?options.body_read_timeout, "a request body was not sent in time");
    let mut response = error_response(
        StatusCode::REQUEST_TIMEOUT,
        "the request body was not sent in time",
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Reads a POST body of at most the message size limit: a `Content-Length` over it is refused
/// before reading anything, a longer body as soon as the bytes read pass it. Each chunk is
/// charged as it arrives (a declared length holds nothing until it is sent), to the client's
/// share of the request budget; when that has no room, a body small enough for the reserve
/// goes on there, for a message that holds nothing once handled. A body whole in its first
/// chunk waits for nothing while it is held: it is left to [`ReadBody::parse`] to charge with
/// what parsing it builds, in one step, before anything is built.
async fn read_body<B: HttpBody<Data = Bytes>>(
    body: B,
    state: &HttpState,
    client: Option<&Arc<Client>>,
) -> Result<ReadBody, Response> {
    let max = state.core.options.max_message_size;
    let too_large = || {
        json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            encode_error(
                None,
                &ErrorObject::invalid_request(format!(
                    "the body exceeds the message size limit of {max} bytes"
                )),
            ),
        )
    };
    // The least the body holds: its `Content-Length`, as the connection read it.
    if body.size_hint().lower() > max as u64 {
        return Err(too_large());
    }
    let requests = state.core.request_bytes.account(client);
    let mut held = match requests.charge(REQUEST_OVERHEAD) {
        Some(charge) => Held {
            charge,
            reserve: false,
            never_fits: None,
        },
        None => reserve(state, client, 0, None)?,
    };
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut rest = Vec::new();
    // Counted as chunks arrive, each once (`rest` holds a copy of `first` once a second chunk
    // comes, so adding their lengths would count the first chunk twice).
    let mut length = 0usize;
    let mut uncharged = 0usize;
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let Ok(frame) = frame else {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                "the body could not be read",
            ));
        };
        // Trailers carry nothing a message needs.
        let Ok(chunk) = frame.into_data() else {
            continue;
        };
        length = length.saturating_add(chunk.len());
        if length > max {
            return Err(too_large());
        }
        // A body whole in its first chunk (most are) waits for nothing more: its bytes are
        // charged with what parsing them builds, in one step, right after.
        if first.is_none() && body.is_end_stream() {
            uncharged = chunk.len();
            first = Some(chunk);
            break;
        }
        if !held.charge.grow(chunk.len()) {
            if held.reserve {
                return Err(held.refusal());
            }
            let needs = length.saturating_add(REQUEST_OVERHEAD);
            let cap = held.charge.cap();
            // It could never fit, however long it waited (413 unless it holds nothing once
            // handled, on the reserve).
            let never = (needs > cap).then_some((needs, cap));
            // The rest on the reserve, if it is small enough for it.
            held = reserve(state, client, length, never)?;
        }
        match &first {
            None => first = Some(chunk),
            Some(head) => {
                if rest.is_empty() {
                    rest.extend_from_slice(head);
                }
                rest.extend_from_slice(&chunk);
            }
        }
    }
    let bytes = if rest.is_empty() {
        first.unwrap_or_default()
    } else {
        Bytes::from(rest)
    };
    Ok(ReadBody {
        bytes,
        charge: held,
        uncharged,
    })
}

/// A body of `length` bytes so far moved to the reserve (`never` when it could never fit
/// the request budget): refused (413 or 503, see [`Held::refusal`]) when it is too long for the
/// reserve or the reserve (or the client's share of it) is full too.
#[cold]
fn reserve(
    state: &HttpState,
    client: Option<&Arc<Client>>,
    length: usize,
    never: Option<(usize, usize)>,
) -> Result<Held, Response> {
    let charge = (length <= CONTROL_BODY)
        .then(|| {
            state
                .control
                .account(client)
                .charge(REQUEST_OVERHEAD + length)
        })
        .flatten();
    let held = Held {
        charge: match charge {
            Some(charge) => charge,
            None => {
                return Err(match never {
                    Some((needs, cap)) => never_fits(needs, cap),
                    None => busy(),
                });
            }
        },
        reserve: true,
        never_fits: never,
    };
    Ok(held)
}
