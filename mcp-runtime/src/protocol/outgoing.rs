//! What the server hands a transport for its client: encoded JSON-RPC, tagged with what the
//! transport needs to know about it, so that no transport reads ids back out of the JSON.

use super::jsonrpc::{ErrorObject, RequestId, encode_error};

/// One thing for the client, in the order it was produced.
///
/// Every slot of a queue of these (a session's outbox) is as large as the largest variant, so
/// what is rare is boxed: a reply is 48 bytes, and a refused one (429, 503) a pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outgoing {
    /// The answer (result or error) to the client's request `id`; `None` for the error
    /// answering a message whose id could not be read.
    Reply {
        /// The request this answers.
        id: Option<RequestId>,
        /// The encoded response.
        bytes: Vec<u8>,
    },
    /// The answer to a request the server refused (a rate limit, an overload), which HTTP
    /// sends with the refusal's status and `Retry-After` when it is a POST's whole answer.
    Refused(Box<RefusedReply>),
    /// The answers to a 2025-03-26 batch, as one JSON array: every request of the batch that
    /// had an id is answered in it.
    Batch(Vec<u8>),
    /// Anything else: a notification or a request to the client.
    Message(Vec<u8>),
    /// The handler asked to end the HTTP response carrying its stream without ending the stream
    /// (SEP-1699 polling); nothing is written. Transports without such streams ignore it.
    CloseStream,
}

/// A refused request's answer: [`Outgoing::Refused`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefusedReply {
    /// The request this answers.
    id: RequestId,
    /// The encoded error.
    bytes: Vec<u8>,
    refusal: Refusal,
}

/// An answer the client is refused with, as HTTP shows it: the status (429, 503) and the
/// seconds of `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<u32>,
}

impl Outgoing {
    /// The answer to request `id`.
    pub(crate) fn reply(id: RequestId, bytes: Vec<u8>) -> Self {
        Self::Reply {
            id: Some(id),
            bytes,
        }
    }

    /// The answer to request `id`, sent over HTTP as `refusal` says when there is one.
    pub(crate) fn refusal(id: RequestId, bytes: Vec<u8>, refusal: Option<Refusal>) -> Self {
        match refusal {
            Some(refusal) => Self::Refused(Box::new(RefusedReply { id, bytes, refusal })),
            None => Self::reply(id, bytes),
        }
    }

    /// An error answer; its `id` is `null` when the request's could not be read.
    pub(crate) fn error(id: Option<&RequestId>, error: &ErrorObject) -> Self {
        Self::Reply {
            id: id.cloned(),
            bytes: encode_error(id, error),
        }
    }

    /// How HTTP sends this, when it is a refusal.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn refused(&self) -> Option<Refusal> {
        match self {
            Self::Refused(refused) => Some(refused.refusal),
            _ => None,
        }
    }

    /// The request this answers, when it is the answer to one whose id was read (refused or
    /// not).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn reply_to(&self) -> Option<&RequestId> {
        match self {
            Self::Reply { id, .. } => id.as_ref(),
            Self::Refused(refused) => Some(&refused.id),
            _ => None,
        }
    }

    /// The encoded JSON to write, if anything is to be written.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Reply { bytes, .. } | Self::Batch(bytes) | Self::Message(bytes) => Some(bytes),
            Self::Refused(refused) => Some(&refused.bytes),
            Self::CloseStream => None,
        }
    }

    /// The encoded JSON, taken out; `None` for [`CloseStream`](Outgoing::CloseStream).
    pub(crate) fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Self::Reply { bytes, .. } | Self::Batch(bytes) | Self::Message(bytes) => Some(bytes),
            Self::Refused(refused) => Some(refused.bytes),
            Self::CloseStream => None,
        }
    }
}

/// Joins encoded responses into one JSON array, the answer to a batch.
pub(crate) fn encode_batch<B: AsRef<[u8]>>(replies: &[B]) -> Vec<u8> {
    let length = replies.iter().map(|r| r.as_ref().len() + 1).sum::<usize>();
    let mut out = Vec::with_capacity(length + 2);
    out.push(b'[');
    for (i, reply) in replies.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(reply.as_ref());
    }
    out.push(b']');
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn errors_answer_their_request_even_without_its_id() {
        let id = RequestId::Number(7);
        let error = ErrorObject::invalid_request("no");
        assert!(matches!(
            Outgoing::error(Some(&id), &error),
            Outgoing::Reply {
                id: Some(RequestId::Number(7)),
                ..
            }
        ));
        assert!(matches!(
            Outgoing::error(None, &error),
            Outgoing::Reply { id: None, .. }
        ));
        assert_eq!(Outgoing::CloseStream.bytes(), None);
    }

    #[test]
    fn a_queue_slot_is_as_large_as_a_reply_and_a_refused_one_is_boxed() {
        // Each session's outbox holds a block of these (32 slots) from its start: a refusal
        // kept in every reply would make it larger for every session.
        assert_eq!(
            std::mem::size_of::<Outgoing>(),
            std::mem::size_of::<Option<RequestId>>() + std::mem::size_of::<Vec<u8>>()
        );
        let refusal = Refusal {
            status: 429,
            retry_after: Some(2),
        };
        let refused = Outgoing::refusal(RequestId::Number(3), b"{}".to_vec(), Some(refusal));
        assert_eq!(refused.refused(), Some(refusal));
        assert_eq!(refused.reply_to(), Some(&RequestId::Number(3)));
        assert_eq!(refused.bytes(), Some(&b"{}"[..]));
        assert_eq!(refused.into_bytes(), Some(b"{}".to_vec()));
        let answered = Outgoing::refusal(RequestId::Number(3), b"{}".to_vec(), None);
        assert_eq!(
            answered,
            Outgoing::reply(RequestId::Number(3), b"{}".to_vec())
        );
        assert_eq!(answered.refused(), None);
        assert_eq!(answered.reply_to(), Some(&RequestId::Number(3)));
        let unread = Outgoing::error(None, &ErrorObject::invalid_request("no"));
        assert_eq!(unread.reply_to(), None);
        assert_eq!(Outgoing::Message(b"{}".to_vec()).reply_to(), None);
    }

    #[test]
    fn a_batch_is_one_array_of_its_replies() {
        let joined = encode_batch(&[br#"{"a":1}"#.to_vec(), br#"{"b":2}"#.to_vec()]);
        let value: Value = serde_json::from_slice(&joined).unwrap();
        assert_eq!(value, json!([{"a": 1}, {"b": 2}]));
        assert_eq!(encode_batch::<Vec<u8>>(&[]), b"[]");
    }
}
