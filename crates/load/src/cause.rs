//! The cause of a failed request, classified from what the engine saw: an `io::Error`, a
//! rustls error, a framing error. Each gives a [`Cause`]: a small `Copy` code, never a
//! string, so the failure path stays as cheap as counting (the wording is the report's).

use std::io;

use stats::reason::{At, Cause, CertProblem, Rule, ECONNREFUSED, ECONNRESET};

use crate::response::ParseError;
use crate::tls::{is_ca_used_as_end_entity, SelfSigned, UnknownIssuer};

/// The rustls error inside `e`, if the TLS layer failed rather than the socket.
pub(crate) fn tls_error(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}

/// The cause of a socket error `e` that struck at `at`.
pub(crate) fn of_io(e: &io::Error, at: At) -> Cause {
    if let Some(t) = tls_error(e) {
        return of_tls(t, at);
    }
    match (e.raw_os_error(), e.kind()) {
        (Some(n), _) if n == i32::from(ECONNRESET) => Cause::Reset(at),
        (Some(n), _) => u16::try_from(n).map_or(Cause::Unknown, Cause::Errno),
        (None, io::ErrorKind::ConnectionReset) => Cause::Reset(at),
        (None, io::ErrorKind::ConnectionRefused) => Cause::Errno(ECONNREFUSED),
        // The transport's own "closed during the TLS handshake".
        (None, io::ErrorKind::UnexpectedEof) => Cause::Closed(at),
        _ => Cause::Unknown,
    }
}

/// The cause of a failed TLS session that failed at `at`. Only what rustls says: it does
/// not tell which alert it sent, so none is named; a malformed message is a server that
/// does not speak TLS only during the handshake, and a bad record after it.
pub(crate) fn of_tls(e: &rustls::Error, at: At) -> Cause {
    use rustls::{CertificateError as C, Error as E};
    match e {
        E::AlertReceived(a) => Cause::AlertReceived(u8::from(*a)),
        E::InvalidCertificate(c) => Cause::Cert(match c {
            C::Expired | C::ExpiredContext { .. } => CertProblem::Expired,
            C::NotValidYet | C::NotValidYetContext { .. } => CertProblem::NotValidYet,
            C::NotValidForName | C::NotValidForNameContext { .. } => CertProblem::WrongName,
            C::UnknownIssuer => CertProblem::UnknownIssuer,
            C::BadSignature => CertProblem::BadSignature,
            C::Revoked => CertProblem::Revoked,
            C::Other(o) if is_ca_used_as_end_entity(o) => CertProblem::CaUsedAsServer,
            C::Other(o) if o.0.is::<UnknownIssuer>() => CertProblem::UnknownIssuer,
            // Its own issuer, untrusted.
            C::Other(o) if o.0.is::<SelfSigned>() => CertProblem::UnknownIssuer,
            _ => CertProblem::Invalid,
        }),
        E::InvalidMessage(_) if at == At::Handshake => Cause::NotTls,
        E::InvalidMessage(_) | E::DecryptError | E::PeerSentOversizedRecord => Cause::BadRecord,
        E::PeerIncompatible(_) => Cause::PeerIncompatible,
        E::PeerMisbehaved(_) | E::NoCertificatesPresented => Cause::PeerMisbehaved,
        _ => Cause::TlsOther,
    }
}

/// The framing rule a malformed response broke.
pub(crate) fn of_parse(e: ParseError) -> Cause {
    Cause::Parse(match e {
        ParseError::Head => Rule::Head,
        ParseError::HeadTooLarge => Rule::HeadTooLarge,
        ParseError::ContentLength => Rule::ContentLength,
        ParseError::Chunk => Rule::ChunkSize,
        ParseError::Upgrade => Rule::Upgrade,
    })
}

#[cfg(test)]
mod tests;
