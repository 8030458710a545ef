use super::*;

#[test]
fn codes_have_slots_and_names() {
    assert_eq!(code_slot(code::REFUSED_STREAM), 7);
    assert_eq!(CODE_NAMES[code_slot(0xdead)], "other");
    assert_eq!(
        CODE_NAMES[code_slot(code::ENHANCE_YOUR_CALM)],
        "ENHANCE_YOUR_CALM"
    );
}
