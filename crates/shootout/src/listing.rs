//! What `foxbench shootout --list` shows of a suite: `report`'s typed listing, filled from
//! the suite and this machine (which programs are missing, which CPUs each side gets).

use std::path::Path;

use report::listing::{Level, Listing, Scenario, Service, Services, Target};

use crate::suite::{CertCheck, Suite};

/// The listing of `suite`, read from `source`, whose commands run in `root`.
pub fn listing(suite: &Suite, source: &str, root: &Path) -> Listing {
    let (client_cpus, mut server_cpus) = crate::runner::assign_cpus(suite);
    let service_cpus = crate::services::assign_cpus(suite, &mut server_cpus);
    let missing = |requires: &[String]| -> Vec<String> {
        requires
            .iter()
            .filter(|r| crate::cache::which(r).is_none())
            .cloned()
            .collect()
    };
    let services = (!suite.services.is_empty()).then(|| Services {
        notes: crate::services::sharing(&client_cpus, &server_cpus, &service_cpus),
        cpus: service_cpus.clone(),
        rows: suite
            .services
            .iter()
            .map(|sv| Service {
                name: sv.name().to_string(),
                missing: missing(&sv.target.requires),
            })
            .collect(),
    });
    Listing {
        suite: suite.name.clone(),
        source: source.to_string(),
        root: root.display().to_string(),
        client_cpus,
        server_cpus,
        services,
        levels: suite
            .plan
            .levels
            .iter()
            .map(|l| Level {
                name: l.name.clone(),
                connections: l.connections,
                rate: l.rate.as_ref().map(|r| r.text.clone()),
                requests: l.requests,
                no_tls_resumption: l.tls_resume == Some(false),
            })
            .collect(),
        scenarios: suite
            .scenarios
            .iter()
            .map(|s| Scenario {
                name: s.name.clone(),
                method: s.method.clone(),
                path: s.path.clone(),
                https: s.tls.as_ref().map(|t| cert_words(&t.cert)),
                levels: s.levels.clone(),
                targets: s.targets.clone(),
            })
            .collect(),
        targets: suite
            .targets
            .iter()
            .map(|t| Target {
                name: t.name.clone(),
                language: t.language.clone(),
                levels: t.levels.clone(),
                missing: missing(&t.requires),
                install: t.install.clone(),
            })
            .collect(),
    }
}

/// How a scenario checks the server's certificate, in the listing's words.
fn cert_words(cert: &CertCheck) -> String {
    match cert {
        CertCheck::System => "system roots".into(),
        CertCheck::CaFile(path) => format!("cacert {path}"),
        CertCheck::Insecure => "insecure".into(),
    }
}
