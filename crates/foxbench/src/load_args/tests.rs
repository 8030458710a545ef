use clap::Parser;

use super::LoadArgs;

#[derive(Parser)]
struct Flags {
    #[command(flatten)]
    load: LoadArgs,
}

/// `--find-max`'s defaults are measure::search's constants, read back through clap (the
/// window's once said 1 s in a comment and 2 s in the flag).
#[test]
fn find_max_defaults_are_the_search_constants() {
    let f = Flags::try_parse_from(["foxbench", "--find-max", "p99<10ms", "http://127.0.0.1:1/"])
        .expect("parses");
    assert_eq!(f.load.window, measure::search::FIND_MAX_WINDOW);
    assert_eq!(f.load.max_time, measure::search::FIND_MAX_BUDGET);
    assert_eq!(f.load.start_rate, measure::search::DEFAULT_START_RATE);
}
