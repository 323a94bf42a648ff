//! Credentials in context: URL credentials, Authorization headers, bearer tokens,
//! `-u user:pass`, `.netrc`, and key/value assignments (whose keys and values
//! [`crate::heuristics`] classifies).

use super::{Check, Reach, Spec};

/// The words of a secret-named key whose quoted value may run over several
/// lines (`Check::Quoted`): its keywords, and what its gate
/// (`gates::quote_left_open`) looks for in the key.
pub(crate) const QUOTED_KEY_WORDS: [&str; 12] = [
    "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "salt", "hmac",
    "jwt",
];

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "url_credentials",
        pattern: r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@\[\]"'<>]*:([^\s/?#"'<>]+)@[A-Za-z0-9\[]"#,
        keywords: &["://"],
        check: Check::Value(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "authorization_header",
        pattern: r#"(?i-u)(?-u:\b)(?:proxy-)?authorization(?:\\?["'])?:[ \t]*(?:\\?["'])?(?:(?:bearer|basic|token|bot|apikey|api-key|sso-key|key|digest|negotiate|ntlm)[ \t]+)?([a-z0-9\-._~+/=:]{8,})"#,
        keywords: &["authorization"],
        check: Check::AuthHeader,
        reach: Reach::Line,
    },
    Spec {
        kind: "bearer_token",
        pattern: r"(?i-u)(?-u:\b)bearer[ \t]+([a-z0-9\-._~+/]{16,}=*)",
        keywords: &["bearer"],
        check: Check::Bearer,
        reach: Reach::Line,
    },
    Spec {
        kind: "cli_user_password",
        pattern: r#"(?:^|[ \t])(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']+:([^\s"']+)"#,
        keywords: &["-u"],
        check: Check::CliUser,
        reach: Reach::Line,
    },
    Spec {
        kind: "netrc_password",
        // `.netrc`: `machine HOST` (or `default`) then its tokens in any
        // order (`login`, `account`, `port` before `password`, or none).
        // `password` is in every match and in fewer files than `machine`;
        // a gate wants `machine` or `default` before compiling it.
        pattern: r"(?:machine[ \t\r\n]+\S+|default)(?:[ \t\r\n]+(?:login|account|port)[ \t\r\n]+\S+)*[ \t\r\n]+password[ \t\r\n]+(\S+)",
        keywords: &["password"],
        check: Check::Value(1),
        // `.netrc` entries run over several lines.
        reach: Reach::Source,
    },
    Spec {
        kind: "password_assignment",
        // A YAML block scalar under a secret-named key: the value is on the
        // lines after it (`password: |`, `token: >-`); `Check::Block` reads
        // the more-indented lines that follow.
        pattern: r#"(?m)^([ \t]*(?:-[ \t]+)?)["']?([A-Za-z0-9_.\-]+)["']?[ \t]*:[ \t]+[|>][-+0-9]{0,3}[ \t]*(?:#[^\r\n]*)?\r?\n"#,
        keywords: &[": |", ": >"],
        check: Check::Block,
        reach: Reach::Source,
    },
    Spec {
        kind: "password_assignment",
        // A value over several lines: `KEY="first line` (`.env`, shell,
        // YAML's `key: "...`, TOML's `\` continuation), or a triple-quoted
        // `KEY = """` (Python, TOML; `r"""` and the like). The line rule takes the first line; the
        // lines after it hold no key, so a view showing only them needs the
        // whole source (`Check::Quoted` finds the closing quote).
        pattern: r#"(?mi-u)^(?u:\x{FEFF})?[ \t]*(?:export[ \t]+)?(?:-[ \t]+)?["']?([A-Za-z0-9_.\-]*(?:pass|pwd|secret|token|cred|key|auth|cookie|salt|hmac|jwt|session)[A-Za-z0-9_.\-]*)["']?[ \t]*[=:][ \t]*[rbuf]{0,2}(?:(""")(?u:[^\r\n])*|(''')(?u:[^\r\n])*|(")(?:(?u:[^"\\\r\n])|\\(?u:[^\r\n]))*\\?|(')(?u:[^'\r\n])*)\r?\n"#,
        keywords: &QUOTED_KEY_WORDS,
        check: Check::Quoted,
        reach: Reach::Source,
    },
    Spec {
        kind: "password_assignment",
        // PHP constants: `define('AUTH_KEY', '...')` (WordPress salts, API keys).
        pattern: r#"(?i-u)define\([ \t]*['"][A-Z0-9_]*(?:KEY|SALT|SECRET|PASSWORD|PASS|TOKEN|PWD)[A-Z0-9_]*['"][ \t]*,[ \t]*['"]((?u:[^'"\r\n]){6,})['"]"#,
        keywords: &["define("],
        check: Check::Value(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "password_assignment",
        // .NET/XML settings: `<add key="ApiSecret" value="..." />`.
        pattern: r#"(?i-u)key="[A-Za-z0-9_.:\-]*(?:key|secret|password|pwd|token)[A-Za-z0-9_.:\-]*"[ \t]+value="((?u:[^"\r\n]){6,})""#,
        keywords: &["value="],
        check: Check::Value(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "password_assignment",
        // Candidates only: `parse_assignment` reads the operator and value.
        pattern: concat!(
            r"[A-Za-z0-9_.\-]*(?:pass|PASS|Pass|pwd|PWD|Pwd|secret|SECRET|Secret|token|TOKEN|Token|cred|CRED|Cred|key|KEY|Key|auth|AUTH|Auth|cookie|COOKIE|Cookie|session|SESSION|Session|salt|SALT|Salt|hmac|HMAC|Hmac|jwt|JWT|Jwt|bearer|BEARER|Bearer)",
            r#"[A-Za-z0-9_.\-]*(?:\\?["'])?\]?[ \t]*[:=!?]"#,
        ),
        keywords: &[
            "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "salt",
            "hmac", "jwt", "bearer",
        ],
        check: Check::Assignment,
        reach: Reach::Line,
    },
    Spec {
        kind: "password_assignment",
        // Candidates only: `parse_cli_flag` reads the value.
        pattern: concat!(
            r"(?:(?m:^)|[ \t])--?[A-Za-z0-9_\-]*(?:pass|PASS|Pass|pwd|PWD|Pwd|secret|SECRET|Secret|token|TOKEN|Token|cred|CRED|Cred|key|KEY|Key|auth|AUTH|Auth|cookie|COOKIE|Cookie|session|SESSION|Session|salt|SALT|Salt|hmac|HMAC|Hmac|jwt|JWT|Jwt|bearer|BEARER|Bearer)",
            r"[A-Za-z0-9_\-]*(?:=|[ \t])",
        ),
        keywords: &[
            "pass", "pwd", "secret", "token", "cred", "key", "auth", "cookie", "session", "salt",
            "hmac", "jwt", "bearer",
        ],
        check: Check::CliFlag,
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_only_the_password_of_url_credentials: "url_credentials" => (
            "DATABASE_URL=postgres://app:", format!("s3cr3t-{}", rnd(90, 12, ALNUM)), "@db.internal:5432/app"
        );
        redacts_basic_authorization_header_value: "authorization_header" => (
            "Authorization: Basic ", b64(format!("admin:{}", rnd(91, 12, ALNUM)).as_bytes(), B64), "\r\nHost: x"
        );
        redacts_bare_bearer_token: "bearer_token" => (
            "echo \"Bearer ", rnd(92, 40, ALNUM), "\""
        );
        redacts_curl_user_password: "cli_user_password" => (
            "curl -u admin:", format!("hunter2-{}", rnd(93, 8, ALNUM)), " https://api.example.com"
        );
        redacts_netrc_password: "netrc_password" => (
            "machine api.example.com\n  login ci\n  password ", rnd(95, 20, ALNUM), "\n"
        );
        redacts_password_assignment_in_env_file: "password_assignment" => (
            "DB_USER=app\nDB_PASSWORD=", "hunter2".to_string(), "\nDB_HOST=localhost"
        );
        redacts_high_entropy_value_under_weak_key: "generic_secret" => (
            r#"{"auths": {"ghcr.io": {"auth": ""#, b64(format!("user:{}", rnd(94, 16, ALNUM)).as_bytes(), B64), r#""}}}"#
        );
    }
}
