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
        Error::InvalidCertificate(C::Other(OtherError(Arc::new(SelfSigned {
            ca_file: false,
        })))),
        Error::InvalidCertificate(C::Other(OtherError(Arc::new(SelfSigned { ca_file: true })))),
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

/// A certificate for 127.0.0.1 named `CN=name`, signed by `signer` (None: by its own key).
fn certificate(name: &str, signer: Option<(&str, &rcgen::KeyPair)>) -> CertificateDer<'static> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let params = |cn: &str| {
        let mut p = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        p
    };
    let key = KeyPair::generate().unwrap();
    let mut leaf = params(name);
    leaf.is_ca = IsCa::ExplicitNoCa;
    let cert = match signer {
        None => leaf.self_signed(&key).unwrap(),
        Some((cn, signer_key)) => {
            let mut ca = params(cn);
            ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            leaf.signed_by(&key, &Issuer::new(ca, signer_key)).unwrap()
        }
    };
    cert.der().clone()
}

/// Self-signed is both: the issuer's name is the subject's, and the certificate's own key
/// verifies its signature. A certificate that names itself as its issuer but was signed by
/// another key is not.
#[test]
fn self_signed_is_its_own_issuer_by_name_and_by_key() {
    let algorithms = provider().signature_verification_algorithms;
    let now = UnixTime::now();
    let other = rcgen::KeyPair::generate().unwrap();
    assert!(self_signed(&certificate("leaf", None), algorithms, now));
    assert!(!self_signed(
        &certificate("leaf", Some(("a CA", &other))),
        algorithms,
        now
    ));
    // Its own name as the issuer's, another key's signature.
    assert!(!self_signed(
        &certificate("leaf", Some(("leaf", &other))),
        algorithms,
        now
    ));
    assert!(!self_signed(
        &CertificateDer::from(b"not DER".to_vec()),
        algorithms,
        now
    ));
}
