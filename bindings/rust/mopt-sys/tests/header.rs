// header.rs — mopt-sys against include/mopt/mopt.h: every MOPT_API function
// of the header is declared (by build.rs) and nothing else is, the generated
// declarations read the header's types as Rust would, every enum value and
// version/limit macro has the header's value, and the declarations link and
// run against the library (version and status strings).
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::path::PathBuf;

include!("../c_header.rs");

const SYS_SOURCE: &str = include_str!("../src/lib.rs");
// The extern block build.rs wrote from the header.
const SYS_FUNCTIONS: &str = include_str!(concat!(env!("OUT_DIR"), "/functions.rs"));

fn header_text() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../include/mopt/mopt.h");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {}", path.display(), e));
    strip_c_comments(&text, false)
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Identifiers in `s` with what follows them (whitespace skipped).
fn idents_with_next(s: &str) -> Vec<(String, Option<char>)> {
    let chars: Vec<char> = s.chars().collect();
    let mut r = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if is_ident(chars[i]) && (i == 0 || !is_ident(chars[i - 1])) {
            let start = i;
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            r.push((word, chars.get(j).copied()));
        } else {
            i += 1;
        }
    }
    r
}

/// Names of the functions declared with MOPT_API in the header.
fn header_functions(h: &str) -> Vec<String> {
    let mut r = Vec::new();
    for decl in h.split(';').filter(|d| d.contains("MOPT_API ")) {
        let name = idents_with_next(decl)
            .into_iter()
            .find(|(w, next)| w.starts_with("mopt_") && *next == Some('('))
            .map(|(w, _)| w);
        if let Some(name) = name {
            r.push(name);
        }
    }
    r.sort();
    r
}

/// `NAME = 123` (enum values) and `#define NAME 123` pairs for MOPT_* names.
fn header_constants(h: &str) -> BTreeMap<String, i64> {
    let mut r = BTreeMap::new();
    let words: Vec<&str> = h.split(|c: char| c.is_whitespace() || c == ',').collect();
    let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
    for w in words.windows(3) {
        if w[0].starts_with("MOPT_") {
            if w[1] == "=" {
                if let Ok(v) = w[2].trim_end_matches('}').parse::<i64>() {
                    r.insert(w[0].to_string(), v);
                }
            }
        }
        if w[0] == "#define" && w[1].starts_with("MOPT_") {
            if let Ok(v) = w[2].parse::<i64>() {
                r.insert(w[1].to_string(), v);
            }
        }
    }
    r
}

fn rust_functions() -> Vec<String> {
    let mut r: Vec<String> = SYS_FUNCTIONS
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub fn "))
        .map(|l| l.split('(').next().unwrap().trim().to_string())
        .collect();
    r.sort();
    r
}

fn rust_constants() -> BTreeMap<String, i64> {
    let mut r = BTreeMap::new();
    for l in SYS_SOURCE
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
    {
        let name = l.split(':').next().unwrap().trim();
        if let Some(v) = l.split('=').nth(1) {
            if let Ok(v) = v.trim().trim_end_matches(';').parse::<i64>() {
                r.insert(name.to_string(), v);
            }
        }
    }
    r
}

#[test]
fn header_parser_sees_the_api() {
    // Guards the checks below against a parser that finds nothing.
    let h = header_text();
    let f = header_functions(&h);
    assert!(f.len() >= 60, "only {} MOPT_API functions parsed", f.len());
    assert!(f.contains(&"mopt_session_run".to_string()));
    let c = header_constants(&h);
    assert_eq!(c.get("MOPT_DTYPE_BF16"), Some(&16));
    assert_eq!(c.get("MOPT_MAX_RANK"), Some(&8));
}

#[test]
fn every_header_function_is_declared_and_no_other() {
    let header = header_functions(&header_text());
    let rust = rust_functions();
    let missing: Vec<&String> = header.iter().filter(|f| !rust.contains(f)).collect();
    let extra: Vec<&String> = rust.iter().filter(|f| !header.contains(f)).collect();
    assert!(
        missing.is_empty(),
        "declared in mopt.h but not in mopt-sys: {:?}",
        missing
    );
    assert!(
        extra.is_empty(),
        "declared in mopt-sys but not in mopt.h: {:?}",
        extra
    );
}

#[test]
fn generated_declarations_read_the_c_types() {
    // Pointer const-ness from the inside out, void returns, (void) parameter
    // lists, typedef'd callbacks and enums: one declaration of each shape.
    let expect = [
        "pub fn mopt_session_run(session: *mut mopt_session, n_inputs: usize, \
         input_names: *const *const c_char, inputs: *const *const mopt_tensor, \
         n_outputs: usize, output_names: *const *const c_char, \
         outputs: *mut *mut mopt_tensor) -> mopt_status;",
        "pub fn mopt_version() -> *const c_char;",
        "pub fn mopt_model_destroy(model: *mut mopt_model);",
        "pub fn mopt_options_get_string(opts: *const mopt_options, key: *const c_char, \
         value: *mut *const c_char) -> mopt_status;",
        "pub fn mopt_set_log_callback(callback: mopt_log_callback, user: *mut c_void);",
        "pub fn mopt_model_load_v2(path: *const c_char, opts: *const mopt_options, \
         flags: u32, out: *mut *mut mopt_model) -> mopt_status;",
        "pub fn mopt_generator_logits(gen: *const mopt_generator) -> *const f32;",
    ];
    for e in expect {
        assert!(
            SYS_FUNCTIONS.lines().any(|l| l.trim() == e),
            "build.rs did not write `{}`",
            e
        );
    }
}

#[test]
fn every_header_constant_has_its_value() {
    let header = header_constants(&header_text());
    let rust = rust_constants();
    for (name, value) in &header {
        assert_eq!(
            rust.get(name),
            Some(value),
            "{} in mopt.h is {}",
            name,
            value
        );
    }
    for (name, value) in &rust {
        if name != "MOPT_VERSION_NUMBER" {
            assert_eq!(
                header.get(name),
                Some(value),
                "{} in mopt-sys is {}",
                name,
                value
            );
        }
    }
}

#[test]
fn declarations_link_and_run() {
    unsafe {
        assert_eq!(
            mopt_sys::mopt_version_number(),
            mopt_sys::MOPT_VERSION_NUMBER
        );
        let v = CStr::from_ptr(mopt_sys::mopt_version()).to_str().unwrap();
        let expect = format!(
            "{}.{}.{}",
            mopt_sys::MOPT_VERSION_MAJOR,
            mopt_sys::MOPT_VERSION_MINOR,
            mopt_sys::MOPT_VERSION_PATCH
        );
        assert_eq!(v, expect);
        let mut seen = Vec::new();
        for s in mopt_sys::MOPT_OK..=mopt_sys::MOPT_ERR_BUSY {
            let name = CStr::from_ptr(mopt_sys::mopt_status_string(s))
                .to_str()
                .unwrap();
            assert!(
                !name.is_empty() && !seen.contains(&name),
                "status {} is {:?}",
                s,
                name
            );
            seen.push(name);
        }
        assert_eq!(mopt_sys::mopt_dtype_size(mopt_sys::MOPT_DTYPE_BF16), 2);
        let mut t = std::ptr::null_mut();
        let dims = [2i64, 3];
        let st = mopt_sys::mopt_tensor_create(mopt_sys::MOPT_DTYPE_I64, 2, dims.as_ptr(), &mut t);
        assert_eq!(st, mopt_sys::MOPT_OK);
        assert_eq!(mopt_sys::mopt_tensor_size_bytes(t), 48);
        mopt_sys::mopt_tensor_destroy(t);
    }
}
