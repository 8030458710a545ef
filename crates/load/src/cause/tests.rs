use super::*;

#[test]
fn socket_errors_name_their_errno_and_resets_their_stage() {
    let reset = io::Error::from_raw_os_error(104);
    assert_eq!(of_io(&reset, At::MidBody), Cause::Reset(At::MidBody));
    let pipe = io::Error::from_raw_os_error(32);
    assert_eq!(of_io(&pipe, At::BeforeResponse), Cause::Errno(32));
    let tls = io::Error::new(
        io::ErrorKind::InvalidData,
        rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired),
    );
    assert_eq!(of_io(&tls, At::Handshake), Cause::AlertReceived(116));
}

/// A malformed message is "not TLS" only in the handshake; mid-body, after a good
/// handshake, it is a bad record, and no alert is named that rustls did not name.
#[test]
fn of_tls_says_only_what_rustls_said() {
    use rustls::{Error as E, InvalidMessage, PeerIncompatible, PeerMisbehaved};
    let bad = E::InvalidMessage(InvalidMessage::InvalidContentType);
    assert_eq!(of_tls(&bad, At::Handshake), Cause::NotTls);
    for at in [At::BeforeResponse, At::MidHead, At::MidBody] {
        assert_eq!(of_tls(&bad, at), Cause::BadRecord, "{at:?}");
        assert_eq!(of_tls(&E::DecryptError, at), Cause::BadRecord, "{at:?}");
    }
    let incompatible = E::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon);
    assert_eq!(
        of_tls(&incompatible, At::Handshake),
        Cause::PeerIncompatible
    );
    let misbehaved = E::PeerMisbehaved(PeerMisbehaved::IllegalMiddleboxChangeCipherSpec);
    assert_eq!(of_tls(&misbehaved, At::Handshake), Cause::PeerMisbehaved);
    assert_eq!(
        of_tls(&E::NoCertificatesPresented, At::Handshake),
        Cause::PeerMisbehaved
    );
}
