// build.rs — two jobs, with no crates:
// 1. Writes the `extern "C"` block of src/lib.rs (OUT_DIR/functions.rs) from
//    the MOPT_API declarations of mopt.h, so the Rust declarations cannot
//    drift from the header. The header is the one beside this crate in the
//    source tree, else $MOPT_INCLUDE_DIR/mopt/mopt.h, else the one pkg-config's
//    `--cflags mopt` points at. Types and constants stay in src/lib.rs (checked
//    against the header by tests/header.rs).
// 2. Tells rustc where libmopt is: MOPT_LIB_DIR (a folder holding
//    libmopt.so, e.g. an uninstalled meson build tree) wins when set;
//    otherwise the `pkg-config` command is asked for `--libs mopt` (it honours
//    PKG_CONFIG_PATH; PKG_CONFIG names another pkg-config binary).
use std::env;
use std::path::PathBuf;
use std::process::Command;

include!("c_header.rs");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c_header.rs");
    println!("cargo:rerun-if-env-changed=MOPT_INCLUDE_DIR");
    write_functions();
    for var in [
        "MOPT_LIB_DIR",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
    ] {
        println!("cargo:rerun-if-env-changed={}", var);
    }

    if let Some(dir) = env::var_os("MOPT_LIB_DIR").filter(|d| !d.is_empty()) {
        let dir = dir.to_string_lossy().into_owned();
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-lib=dylib=mopt");
        println!("cargo:lib_dir={}", dir);
        return;
    }

    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let output = Command::new(&pkg_config).args(["--libs", "mopt"]).output();
    let output = match output {
        Ok(o) if o.status.success() => o,
        Ok(o) => fail(&format!(
            "`{} --libs mopt` failed: {}",
            pkg_config,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => fail(&format!("cannot run `{}`: {}", pkg_config, e)),
    };
    let flags = String::from_utf8_lossy(&output.stdout).into_owned();
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={}", dir);
            println!("cargo:lib_dir={}", dir);
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={}", lib);
        } else {
            println!("cargo:warning=mopt-sys: ignoring pkg-config flag {}", flag);
        }
    }
}

fn fail(why: &str) -> ! {
    panic!(
        "mopt-sys: cannot find libmopt: {}.\n\
         Install it (`meson install`, then pkg-config must find mopt.pc, \
         e.g. with PKG_CONFIG_PATH=<prefix>/lib/<triplet>/pkgconfig), or set \
         MOPT_LIB_DIR to the folder holding libmopt.so (a meson build folder).",
        why
    )
}

fn pkg_config(args: &[&str]) -> Option<String> {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let o = Command::new(&pkg_config).args(args).output().ok()?;
    if o.status.success() {
        Some(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        None
    }
}

fn header_path() -> PathBuf {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let in_tree = manifest.join("../../../include/mopt/mopt.h");
    if in_tree.is_file() {
        return in_tree;
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = env::var_os("MOPT_INCLUDE_DIR").filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(d));
    }
    if let Some(flags) = pkg_config(&["--cflags-only-I", "mopt"]) {
        dirs.extend(
            flags
                .split_whitespace()
                .filter_map(|f| f.strip_prefix("-I"))
                .map(PathBuf::from),
        );
    }
    dirs.push(PathBuf::from("/usr/local/include"));
    dirs.push(PathBuf::from("/usr/include"));
    for d in &dirs {
        let h = d.join("mopt/mopt.h");
        if h.is_file() {
            return h;
        }
    }
    panic!(
        "mopt-sys: cannot find mopt/mopt.h (looked beside the crate and in {:?}); \
         set MOPT_INCLUDE_DIR to the folder holding mopt/mopt.h",
        dirs
    )
}

/// C tokens: identifiers and single punctuation characters.
fn tokens(s: &str) -> Vec<String> {
    let mut r = Vec::new();
    let mut word = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            r.push(std::mem::take(&mut word));
        }
        if !c.is_whitespace() {
            r.push(c.to_string());
        }
    }
    if !word.is_empty() {
        r.push(word);
    }
    r
}

fn rust_base(c: &str, decl: &str) -> String {
    match c {
        "void" => "c_void",
        "char" => "c_char",
        "int" => "c_int",
        "float" => "f32",
        "double" => "f64",
        "size_t" => "usize",
        "int8_t" => "i8",
        "uint8_t" => "u8",
        "int32_t" => "i32",
        "uint32_t" => "u32",
        "int64_t" => "i64",
        "uint64_t" => "u64",
        t if t.starts_with("mopt_") => t,
        t => panic!("mopt-sys: no Rust type for C type `{}` in `{}`", t, decl),
    }
    .to_string()
}

/// A C type (tokens without the name) as Rust: `const char *const *` is
/// `*const *const c_char`; each pointer is `*const` when what it points at
/// is const-qualified.
fn rust_type(t: &[String], decl: &str) -> String {
    let mut base: Option<&str> = None;
    let mut pointee_const = false; // const-ness of what the next `*` points at
    let mut stars: Vec<bool> = Vec::new(); // per `*`, innermost first: pointee const
    for tok in t {
        match tok.as_str() {
            "const" => pointee_const = true,
            "*" => {
                stars.push(pointee_const);
                pointee_const = false;
            }
            "struct" | "enum" => {}
            w => {
                assert!(
                    base.is_none(),
                    "mopt-sys: cannot read the C type in `{}`",
                    decl
                );
                base = Some(w);
            }
        }
    }
    let base = base.unwrap_or_else(|| panic!("mopt-sys: no C type in `{}`", decl));
    let mut r = String::new();
    for &c in stars.iter().rev() {
        r.push_str(if c { "*const " } else { "*mut " });
    }
    r.push_str(&rust_base(base, decl));
    r
}

/// One MOPT_API declaration (`ret name(params)`, without MOPT_API) as a Rust
/// `pub fn` line.
fn rust_fn(decl: &str) -> String {
    let t = tokens(decl);
    let open = t.iter().position(|w| w == "(").expect("mopt-sys: no `(`");
    assert!(
        t.last().map(|w| w.as_str()) == Some(")"),
        "mopt-sys: cannot read `{}`",
        decl
    );
    let name = &t[open - 1];
    let ret = &t[..open - 1];
    let params = &t[open + 1..t.len() - 1];
    let mut args = Vec::new();
    if !(params.len() == 1 && params[0] == "void") {
        for p in params.split(|w| w == ",") {
            let (pname, ptype) = p.split_last().expect("mopt-sys: empty parameter");
            args.push(format!("{}: {}", pname, rust_type(ptype, decl)));
        }
    }
    let ret = if ret.len() == 1 && ret[0] == "void" {
        String::new()
    } else {
        format!(" -> {}", rust_type(ret, decl))
    };
    format!("    pub fn {}({}){};\n", name, args.join(", "), ret)
}

fn write_functions() {
    let header = header_path();
    println!("cargo:rerun-if-changed={}", header.display());
    let text = std::fs::read_to_string(&header)
        .unwrap_or_else(|e| panic!("mopt-sys: cannot read {}: {}", header.display(), e));
    let text = strip_c_comments(&text, true);
    let mut out = format!(
        "// Written by build.rs from {}: do not edit.\nextern \"C\" {{\n",
        header.display()
    );
    let mut n = 0;
    for decl in text.split(';') {
        if let Some(pos) = decl.find("MOPT_API ") {
            let decl = decl[pos + "MOPT_API ".len()..].trim();
            out.push_str(&rust_fn(decl));
            n += 1;
        }
    }
    out.push_str("}\n");
    assert!(
        n >= 60,
        "mopt-sys: only {} MOPT_API functions in {}",
        n,
        header.display()
    );
    let dest = PathBuf::from(env::var_os("OUT_DIR").unwrap()).join("functions.rs");
    std::fs::write(&dest, out)
        .unwrap_or_else(|e| panic!("mopt-sys: cannot write {}: {}", dest.display(), e));
}
