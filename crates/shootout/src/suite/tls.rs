//! A scenario over TLS: `scheme = "https"`, how the target's certificate is checked
//! (`insecure = true`, or `cacert = "..."` naming a PEM file, often one the target's build
//! made under `{out}`), a client certificate for mutual TLS (`cert` and `key`, PEM files),
//! and the level key `tls_resume` that turns session resumption off.

use super::fill;

/// How a TLS scenario checks the target's certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CertCheck {
    /// Against the system's trusted roots.
    System,
    /// Against the CA certificates in this file; `{out}` and `{dir}` are the target's.
    CaFile(String),
    /// Not at all (`insecure = true`): any certificate, for any name.
    Insecure,
}

/// A scenario's TLS settings, before a target's paths are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioTls {
    /// How the certificate is checked.
    pub cert: CertCheck,
    /// The client certificate and key files to present (`cert`, `key`); `{out}` and
    /// `{dir}` are the target's.
    pub client: Option<(String, String)>,
}

impl ScenarioTls {
    /// Reads the scenario keys: `scheme`, `insecure`, `cacert`. `None` for plain HTTP. The
    /// error is the key at fault and what to do.
    pub(super) fn read(
        scheme: Option<&str>,
        insecure: Option<bool>,
        cacert: Option<String>,
    ) -> Result<Option<ScenarioTls>, (&'static str, String)> {
        let https = match scheme {
            None | Some("http") => false,
            Some("https") => true,
            Some(other) => {
                return Err((
                    "scheme",
                    format!("{other:?}: use \"http\" (the default) or \"https\""),
                ))
            }
        };
        let cert = match (insecure.unwrap_or(false), cacert) {
            (true, Some(_)) => {
                return Err((
                    "cacert",
                    "insecure = true checks no certificate, so a cacert has no use: keep one of the two".into(),
                ))
            }
            (true, None) => CertCheck::Insecure,
            (false, Some(path)) if path.trim().is_empty() => {
                return Err(("cacert", "empty path: name a PEM file, e.g. \"{out}/cert.pem\"".into()))
            }
            (false, Some(path)) => CertCheck::CaFile(path),
            (false, None) => CertCheck::System,
        };
        if !https {
            if insecure.is_some() {
                return Err(("insecure", "only for TLS: add scheme = \"https\"".into()));
            }
            if cert != CertCheck::System {
                return Err(("cacert", "only for TLS: add scheme = \"https\"".into()));
            }
            return Ok(None);
        }
        Ok(Some(ScenarioTls { cert, client: None }))
    }

    /// Adds the scenario keys `cert` and `key`: both or neither, and only over TLS.
    pub(super) fn with_client(
        tls: Option<ScenarioTls>,
        client: (Option<String>, Option<String>),
    ) -> Result<Option<ScenarioTls>, (&'static str, String)> {
        let pair = match client {
            (None, None) => return Ok(tls),
            (Some(_), None) => {
                return Err(("cert", "needs its private key: add key = \"FILE\"".into()))
            }
            (None, Some(_)) => {
                return Err(("key", "needs its certificate: add cert = \"FILE\"".into()))
            }
            (Some(c), Some(k)) => (c, k),
        };
        for (key, path) in [("cert", &pair.0), ("key", &pair.1)] {
            if path.trim().is_empty() {
                return Err((key, "empty path: name a PEM file".into()));
            }
        }
        match tls {
            Some(tls) => Ok(Some(ScenarioTls {
                client: Some(pair),
                ..tls
            })),
            None => Err(("cert", "only for TLS: add scheme = \"https\"".into())),
        }
    }

    /// The load engine's settings for a target whose build went to `out` and whose
    /// directory is `dir`, with resumption on or off.
    pub fn options(&self, out: &str, dir: &str, resume: bool) -> load::TlsOptions {
        let verify = match &self.cert {
            CertCheck::System => load::Verify::System,
            CertCheck::Insecure => load::Verify::Insecure,
            CertCheck::CaFile(path) => {
                load::Verify::CaFile(fill(path, &[("out", out), ("dir", dir)]).into())
            }
        };
        let path = |p: &str| std::path::PathBuf::from(fill(p, &[("out", out), ("dir", dir)]));
        load::TlsOptions {
            verify,
            resume,
            client: self.client.as_ref().map(|(cert, key)| load::ClientCert {
                cert: path(cert),
                key: path(key),
            }),
        }
    }
}

#[cfg(test)]
mod tests;
