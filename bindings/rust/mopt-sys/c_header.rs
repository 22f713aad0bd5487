// c_header.rs — the C reading shared by build.rs (which writes the extern
// block from mopt.h) and tests/header.rs (which checks src/lib.rs against
// it): included by both with `include!`.

/// `s` without its comments (each block comment becomes a space) and, when
/// `drop_directives`, without its preprocessor lines and their continuations.
#[allow(dead_code)]
fn strip_c_comments(s: &str, drop_directives: bool) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        if b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'*' {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if (b[i] == b'/' && i + 1 < b.len() && b[i + 1] == b'/')
            || (drop_directives && line_start && b[i] == b'#')
        {
            while i < b.len() && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
        } else {
            if b[i] == b'\n' {
                line_start = true;
            } else if !b[i].is_ascii_whitespace() {
                line_start = false;
            }
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}
