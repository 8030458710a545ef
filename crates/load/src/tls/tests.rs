use super::*;
use rustls::{AlertDescription, CertificateError as C, Error, OtherError};

/// Every failure's sentence is one line with no Rust `Debug` text.
#[test]
fn every_explanation_is_one_plain_line() {
    let t = |s: u64| UnixTime::since_unix_epoch(std::time::Duration::from_secs(s));
    let mut errors = vec![
        Error::InvalidCertificate(C::ExpiredContext {
            time: t(1_795_707_117),
            not_after: t(1_795_620_717),
        }),
        Error::InvalidCertificate(C::NotValidYetContext {
            time: t(1_795_620_717),
            not_before: t(1_795_707_117),
        }),
        Error::InvalidCertificate(C::NotValidForNameContext {
            expected: ServerName::try_from("a.example").unwrap(),
            presented: vec![
                "DnsName(\"b.example\")".into(),
                "IpAddress(10.0.0.1)".into(),
                "DirectoryName".into(),
            ],
        }),
        Error::InvalidCertificate(C::Other(OtherError(Arc::new(
            webpki::Error::CaUsedAsEndEntity,
        )))),
        Error::InvalidCertificate(C::Other(OtherError(Arc::new(
            webpki::Error::UnsupportedCriticalExtension,
        )))),
        Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
        Error::PeerMisbehaved(rustls::PeerMisbehaved::IllegalMiddleboxChangeCipherSpec),
        Error::PeerIncompatible(rustls::PeerIncompatible::NoCipherSuitesInCommon),
        Error::General("x".into()),
    ];
    for c in [
        C::UnknownIssuer,
        C::NotValidForName,
        C::Expired,
        C::NotValidYet,
        C::BadSignature,
        C::Revoked,
        C::BadEncoding,
        C::InvalidPurpose,
        C::UnknownRevocationStatus,
    ] {
        errors.push(Error::InvalidCertificate(c));
    }
    for n in 0..=255u8 {
        errors.push(Error::AlertReceived(AlertDescription::from(n)));
    }
    for e in errors {
        let line = explain(&e, "127.0.0.1").to_string();
        assert!(!line.contains('\n'), "{line}");
        for debug in [
            "{",
            "(Other",
            "UnixTime",
            "Context",
            "Unknown(",
            "OtherError",
            "DnsName",
            "IpAddress(",
        ] {
            assert!(!line.contains(debug), "{e:?} reads {line:?}");
        }
    }
    let expired = explain(
        &Error::InvalidCertificate(C::ExpiredContext {
            time: t(1_795_707_117),
            not_after: t(1_795_620_717),
        }),
        "127.0.0.1",
    )
    .to_string();
    assert!(
        expired.contains("valid until 2026-11-25T15:31:57Z, now 2026-11-26T15:31:57Z"),
        "{expired}"
    );
    let name = explain(
        &Error::InvalidCertificate(C::NotValidForNameContext {
            expected: ServerName::try_from("a.example").unwrap(),
            presented: vec![
                "DnsName(\"b.example\")".into(),
                "IpAddress(10.0.0.1)".into(),
            ],
        }),
        "a.example",
    )
    .to_string();
    assert!(name.contains("it holds b.example, 10.0.0.1:"), "{name}");
    let issuer = explain(
        &Error::InvalidCertificate(C::Other(OtherError(Arc::new(UnknownIssuer(
            "CN=foxbench test CA".into(),
        ))))),
        "127.0.0.1",
    )
    .to_string();
    assert!(
        issuer.contains("its issuer is CN=foxbench test CA;"),
        "{issuer}"
    );
}
