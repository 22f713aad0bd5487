// build.rs — tells rustc where libmopt is, with no crates: MOPT_LIB_DIR (a
// folder holding libmopt.so, e.g. an uninstalled meson build tree) wins when
// set; otherwise the `pkg-config` command is asked for `--libs mopt` (it
// honours PKG_CONFIG_PATH; PKG_CONFIG names another pkg-config binary).
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
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
