//! Build tools and package managers. Anything that loads the project's
//! configuration can run programs the repository chose: `cargo` reads
//! `.cargo/config.toml` (`build.rustc`, `build.rustc-wrapper`, `target.*.runner`,
//! `[alias]`) for every subcommand that loads config, `npm` runs scripts.
//! Only version and help queries are low risk, and not even those for the
//! tools whose version a toolchain file in the repository chooses.

const TOOLS: &[&str] = &[
    "cargo", "rustc", "rustup", "npm", "pnpm", "yarn", "bun", "npx", "node", "deno", "pip", "pip3",
    "uv", "pipx", "poetry", "gem", "bundle", "go", "apt", "apt-get", "dnf", "yum", "apk", "brew",
    "pacman", "conda", "make", "cmake", "ninja", "python", "python3", "ruby", "perl", "php",
    "java", "mvn", "gradle",
];

pub fn is_package_tool(p: &str) -> bool {
    TOOLS.contains(&p)
}

/// Why this invocation is high risk: always, except a version/help query.
pub fn judge(prog: &str, args: &[&str]) -> Option<String> {
    let query = matches!(
        args,
        ["--version"] | ["-V"] | ["version"] | ["--help"] | ["-h"]
    );
    // rustup's proxies read the repository's rust-toolchain.toml (which can
    // name a toolchain `path` inside it) and go reads go.mod's `toolchain`
    // line, even for a version query. The JavaScript package managers read
    // the project's `.yarnrc`/`.yarnrc.yml` (`yarn-path`/`yarnPath`: a script
    // in the repository run instead of yarn) or `packageManager` (corepack
    // fetches and runs that version); `mvn` reads `.mvn/jvm.config` and
    // `.mvn/maven.config` (JVM options: `-javaagent:` loads a repository
    // jar), `gradle` the project's `gradle.properties` (`org.gradle.java.home`),
    // bundler `.bundle/config`, poetry its plugins: all before printing a version.
    let toolchain_file = matches!(
        prog,
        "cargo"
            | "rustc"
            | "rustup"
            | "go"
            | "npm"
            | "npx"
            | "pnpm"
            | "yarn"
            | "bun"
            | "mvn"
            | "gradle"
            | "bundle"
            | "poetry"
    );
    if query && prog != "make" && !toolchain_file {
        return None;
    }
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .copied()
        .unwrap_or("");
    Some(match (prog, sub) {
        ("cargo", "install") => "package install (`cargo install`)".into(),
        ("cargo", s) => format!(
            "`cargo {s}` loads the repository's cargo configuration, which can name programs to run (build.rustc, aliases, runners)"
        ),
        (_, "i" | "install" | "add" | "ci" | "get" | "sync" | "update" | "upgrade") => {
            format!("package install (`{prog} {sub}`)")
        }
        _ => format!("`{prog}` runs project code or scripts"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_version_queries_are_low() {
        assert!(judge("python3", &["--version"]).is_none());
        assert!(judge("cargo", &["--version"]).is_some());
        assert!(judge("cargo", &["metadata"]).is_some());
        assert!(judge("cargo", &["tree"]).is_some());
        assert!(judge("npm", &["ls"]).is_some());
        for p in ["yarn", "npm", "pnpm", "mvn", "gradle"] {
            assert!(judge(p, &["--version"]).is_some(), "{p}");
        }
    }
}
