use super::*;

/// Every subcommand, as clap knows it (not a list kept by hand).
fn subcommands() -> Vec<String> {
    let names: Vec<String> = crate::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    assert!(names.len() >= 9, "{names:?}");
    names
}

#[test]
fn man_page_names_every_subcommand() {
    let mut page = Vec::new();
    man_page(&mut page).unwrap();
    let page = String::from_utf8(page).unwrap();
    assert!(page.starts_with(".ie"), "{page:.200}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    for name in subcommands() {
        // clap_mangen lists each as `foxbench\-NAME(1)`, the roff escape of a hyphen.
        let entry = format!("foxbench\\-{}(1)", name.replace('-', "\\-"));
        assert!(page.contains(&entry), "{entry} missing from the man page");
    }
}

#[test]
fn man_dir_gets_one_page_per_subcommand() {
    let dir = std::env::temp_dir().join(format!("foxbench-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    man(ManArgs {
        dir: Some(dir.clone()),
    })
    .unwrap();
    let mut pages = vec!["foxbench.1".to_string()];
    pages.extend(subcommands().iter().map(|n| format!("foxbench-{n}.1")));
    for page in &pages {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".SH NAME"), "{page}: {text:.200}");
    }
    // The load page carries load's own flags.
    let load = std::fs::read_to_string(dir.join("foxbench-load.1")).unwrap();
    assert!(load.contains("\\-\\-connections"), "{load:.400}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_completion_names_every_subcommand() {
    for shell in Shell::value_variants() {
        let mut script = Vec::new();
        completion(*shell, &mut script);
        let script = String::from_utf8(script).unwrap();
        // How each script names a subcommand, and a flag of one.
        let (entry, flag): (fn(&str) -> String, &str) = match shell {
            Shell::Bash => (|n| format!("foxbench,{n})"), "--connections"),
            Shell::Zsh => (|n| format!("({n})"), "--connections"),
            Shell::Fish => (|n| format!("-a \"{n}\""), "-l connections"),
        };
        for name in subcommands() {
            let want = entry(&name);
            assert!(script.contains(&want), "{shell:?}: no {want:?}");
        }
        assert!(script.contains(flag), "{shell:?}: no {flag:?}");
    }
}
