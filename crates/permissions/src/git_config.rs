//! What a git configuration can make git run, and the `GIT_CONFIG_COUNT`
//! overrides that switch it off: shared by the `git` tool (every view) and
//! `bash` (every reading git command, see `wrench-tools-shell`).
//!
//! git runs programs the repository's own `.git/config` names: an
//! fsmonitor, hooks, pagers, external diffs, textconv and clean/smudge
//! filters, merge drivers, credential helpers, signing programs. A cloned
//! repository controls that file, so a "read-only" git command runs the
//! repository's code unless each of these is overridden from the
//! environment, which has precedence over every configuration file.

use std::collections::BTreeMap;

/// The overrides that switch off everything a configuration can make git
/// run, write or read outside the repository, for the configuration keys
/// `keys` (from `git config -z --list`): fixed ones, and for every configured
/// driver variable (`filter.D.clean`, `diff.D.command`...) an empty one.
pub fn overrides<'a>(keys: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    let mut o: BTreeMap<String, String> = [
        ("core.fsmonitor", "false"),
        ("core.hookspath", "/dev/null"),
        ("core.pager", "cat"),
        ("core.editor", "false"),
        ("sequence.editor", "false"),
        ("core.askpass", ""),
        ("core.sshcommand", "false"),
        ("core.gitproxy", ""),
        ("core.alternaterefscommand", ""),
        ("core.virtualfilesystem", ""),
        ("core.untrackedcache", "false"),
        ("diff.submodule", "short"),
        ("status.submodulesummary", "false"),
        ("submodule.recurse", "false"),
        ("fetch.recursesubmodules", "false"),
        ("log.showsignature", "false"),
        ("log.mailmap", "false"),
        ("mailmap.file", ""),
        ("mailmap.blob", ""),
        ("blame.ignorerevsfile", ""),
        ("credential.helper", ""),
        ("gpg.program", "false"),
        ("gpg.openpgp.program", "false"),
        ("gpg.ssh.program", "false"),
        ("gpg.x509.program", "false"),
        ("gpg.ssh.defaultkeycommand", "false"),
        ("uploadpack.packobjectshook", ""),
        ("protocol.allow", "never"),
        ("protocol.file.allow", "never"),
        ("protocol.ext.allow", "never"),
        ("safe.barerepository", "explicit"),
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
        ("color.ui", "never"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for key in keys {
        let Some((section, rest)) = key.split_once('.') else {
            continue;
        };
        // `pager.<command>` (no subsection) names one command's pager, over
        // `core.pager`, whenever git writes to a terminal.
        if section.eq_ignore_ascii_case("pager") {
            o.insert(key.to_string(), "false".to_string());
            continue;
        }
        // git has no value that turns `diff.external` off (an empty one is
        // run as a program, and every `git diff` fails), so it is
        // overridden only where a configuration sets it.
        if key.eq_ignore_ascii_case("diff.external") {
            o.insert(key.to_string(), String::new());
            continue;
        }
        let Some((_sub, var)) = rest.rsplit_once('.') else {
            continue;
        };
        let section = section.to_ascii_lowercase();
        let var = var.to_ascii_lowercase();
        let value = match (section.as_str(), var.as_str()) {
            ("filter", "clean" | "smudge" | "process") => "",
            ("filter", "required") => "false",
            ("diff", "command" | "textconv") => "",
            ("merge", "driver") => "",
            ("difftool" | "mergetool", "cmd") => "",
            ("protocol", "allow") => "never",
            ("credential", "helper") => "",
            ("remote", "uploadpack" | "receivepack") => "false",
            ("submodule", "update") => "none",
            // `git help` viewers and browsers (`man.viewer` + `man.X.cmd`,
            // `help.format=web` + `browser.X.cmd`).
            ("man" | "browser", "cmd" | "path") => "false",
            _ => continue,
        };
        // Only variables that are set anywhere need an override: one
        // environment entry per configured program keeps git fast.
        o.insert(key.to_string(), value.to_string());
    }
    o
}

/// The keys of `git config -z --list` output (`key\nvalue\0` or `key\0`).
pub fn config_keys(list: &[u8]) -> impl Iterator<Item = &str> {
    list.split(|&b| b == 0)
        .filter(|r| !r.is_empty())
        .filter_map(|r| {
            let k = r.split(|&b| b == b'\n').next()?;
            std::str::from_utf8(k).ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_key_overrides_cover_what_the_configuration_sets_only() {
        let o = overrides([
            "diff.External",
            "pager.log",
            "man.evil.cmd",
            "browser.x.path",
            "filter.lfs.process",
            "user.name",
        ]);
        assert_eq!(o["diff.External"], "");
        assert_eq!(o["pager.log"], "false");
        assert_eq!(o["man.evil.cmd"], "false");
        assert_eq!(o["browser.x.path"], "false");
        assert_eq!(o["filter.lfs.process"], "");
        assert!(!o.contains_key("user.name"));
        // Not set anywhere: not overridden (an empty one breaks `git diff`).
        assert!(!overrides([]).contains_key("diff.external"));
    }
}
