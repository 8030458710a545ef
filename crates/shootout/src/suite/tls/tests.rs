use super::*;

#[test]
fn scheme_insecure_and_cacert_combine_or_are_refused() {
    let ok = |scheme, insecure, cacert: Option<&str>| {
        ScenarioTls::read(scheme, insecure, cacert.map(String::from)).unwrap()
    };
    assert_eq!(ok(None, None, None), None);
    assert_eq!(ok(Some("http"), None, None), None);
    assert_eq!(
        ok(Some("https"), None, None).unwrap().cert,
        CertCheck::System
    );
    assert_eq!(
        ok(Some("https"), Some(true), None).unwrap().cert,
        CertCheck::Insecure
    );
    assert_eq!(
        ok(Some("https"), Some(false), Some("{out}/c.pem"))
            .unwrap()
            .cert,
        CertCheck::CaFile("{out}/c.pem".into())
    );
    let bad = |scheme, insecure, cacert: Option<&str>| {
        ScenarioTls::read(scheme, insecure, cacert.map(String::from)).unwrap_err()
    };
    assert_eq!(bad(Some("tls"), None, None).0, "scheme");
    assert_eq!(bad(Some("https"), Some(true), Some("c.pem")).0, "cacert");
    assert_eq!(bad(Some("https"), None, Some(" ")).0, "cacert");
    assert_eq!(bad(None, Some(true), None).0, "insecure");
    assert_eq!(bad(Some("http"), None, Some("c.pem")).0, "cacert");
}

#[test]
fn cert_and_key_come_together_over_tls_and_name_the_targets_paths() {
    let https = || ScenarioTls::read(Some("https"), None, None).unwrap();
    let pair = |c: Option<&str>, k: Option<&str>| (c.map(String::from), k.map(String::from));
    let tls = ScenarioTls::with_client(https(), pair(Some("{out}/c.pem"), Some("{out}/k.pem")))
        .unwrap()
        .unwrap();
    let o = tls.options("/cache/t", "/src/t", true);
    assert_eq!(
        o.client,
        Some(load::ClientCert {
            cert: "/cache/t/c.pem".into(),
            key: "/cache/t/k.pem".into()
        })
    );
    let bad = |tls, c, k| ScenarioTls::with_client(tls, pair(c, k)).unwrap_err().0;
    assert_eq!(bad(https(), Some("c.pem"), None), "cert");
    assert_eq!(bad(https(), None, Some("k.pem")), "key");
    assert_eq!(bad(https(), Some(" "), Some("k.pem")), "cert");
    assert_eq!(bad(None, Some("c.pem"), Some("k.pem")), "cert");
    assert_eq!(
        ScenarioTls::with_client(https(), pair(None, None)).unwrap(),
        https()
    );
}

#[test]
fn a_cacert_names_the_targets_own_paths() {
    let tls = ScenarioTls {
        client: None,
        cert: CertCheck::CaFile("{out}/tls/cert.pem".into()),
    };
    let o = tls.options("/cache/nginx-tls-k", "/src/targets/x", false);
    assert_eq!(
        o,
        load::TlsOptions {
            client: None,
            verify: load::Verify::CaFile("/cache/nginx-tls-k/tls/cert.pem".into()),
            resume: false
        }
    );
    let insecure = ScenarioTls {
        client: None,
        cert: CertCheck::Insecure,
    };
    assert_eq!(
        insecure.options("o", "d", true).verify,
        load::Verify::Insecure
    );
}
