//! Code hosting, package registries and developer services.

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "github_fine_grained_pat",
        pattern: r"github_pat_[A-Za-z0-9_]{60,255}",
        keywords: &["github_pat_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "github_pat",
        pattern: r"ghp_[A-Za-z0-9]{36,255}",
        keywords: &["ghp_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "github_oauth_token",
        pattern: r"gho_[A-Za-z0-9]{36,255}",
        keywords: &["gho_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "github_app_token",
        pattern: r"gh[us]_[A-Za-z0-9]{36,255}",
        keywords: &["ghu_", "ghs_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "github_refresh_token",
        pattern: r"ghr_[A-Za-z0-9]{36,255}",
        keywords: &["ghr_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "gitlab_pat",
        pattern: r"glpat-[A-Za-z0-9_\-]{20,300}(?:\.[A-Za-z0-9_\-]{2,12}){0,2}",
        keywords: &["glpat-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "gitlab_token",
        pattern: r"(?-u:\b)gl(?:ptt|rt|dt|ft|soat|imt|cbt|agent|oas|wt|ffct)-[A-Za-z0-9_\-]{20,300}",
        keywords: &[
            "glptt-", "glrt-", "gldt-", "glft-", "glsoat-", "glimt-", "glcbt-", "glagent-",
            "gloas-", "glwt-", "glffct-",
        ],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "bitbucket_app_password",
        pattern: r"(?-u:\b)ATBB[A-Za-z0-9_=.\-]{28,}",
        keywords: &["ATBB"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "atlassian_api_token",
        pattern: r"(?-u:\b)AT(?:ATT|CTT)3[A-Za-z0-9_=\-]{150,300}",
        keywords: &["ATATT3", "ATCTT3"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "npm_token",
        pattern: r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        keywords: &["npm_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "pypi_token",
        pattern: r"pypi-AgE[A-Za-z0-9_\-]{50,}",
        keywords: &["pypi-AgE"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "docker_hub_pat",
        pattern: r"(?-u:\b)dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}",
        keywords: &["dckr_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "postman_api_key",
        pattern: r"(?-u:\b)PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?-u:\b)",
        keywords: &["PMAK-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "linear_api_key",
        pattern: r"(?-u:\b)lin_(?:api|oauth)_[A-Za-z0-9]{40,64}(?-u:\b)",
        keywords: &["lin_api_", "lin_oauth_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "notion_token",
        pattern: r"(?-u:\b)(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})(?-u:\b)",
        keywords: &["secret_", "ntn_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_github_fine_grained_pat: "github_fine_grained_pat" => (
            "gh ", format!("{}{}_{}", concat!("github", "_pat_"), rnd(31, 22, ALNUM), rnd(32, 59, ALNUM)), " end"
        );
        redacts_github_classic_pat: "github_pat" => (
            "git clone https://x-access-token:", format!("{}{}", concat!("gh", "p_"), rnd(33, 36, ALNUM)), "@github.com/o/r.git"
        );
        redacts_github_oauth_token: "github_oauth_token" => (
            "gh ", format!("{}{}", concat!("gh", "o_"), rnd(34, 36, ALNUM)), " end"
        );
        redacts_github_app_token: "github_app_token" => (
            "gh ", format!("{}{}", concat!("gh", "s_"), rnd(35, 36, ALNUM)), " end"
        );
        redacts_github_refresh_token: "github_refresh_token" => (
            "gh ", format!("{}{}", concat!("gh", "r_"), rnd(36, 76, ALNUM)), " end"
        );
        redacts_gitlab_pat: "gitlab_pat" => (
            "gl ", format!("{}{}", concat!("glp", "at-"), rnd(37, 20, URLSAFE)), " end"
        );
        redacts_gitlab_pipeline_trigger_token: "gitlab_token" => (
            "gl ", format!("{}{}", concat!("glp", "tt-"), rnd(38, 40, HEX)), " end"
        );
        redacts_bitbucket_app_password: "bitbucket_app_password" => (
            "bb ", format!("{}{}", concat!("AT", "BB"), rnd(39, 32, ALNUM)), " end"
        );
        redacts_atlassian_api_token: "atlassian_api_token" => (
            "jira ", format!("{}{}={}", concat!("ATA", "TT3"), rnd(40, 180, URLSAFE), rnd(41, 8, "0123456789ABCDEF")), " end"
        );
        redacts_npm_token: "npm_token" => (
            "//registry.npmjs.org/:_authToken=", format!("{}{}", concat!("np", "m_"), rnd(42, 36, ALNUM)), "\n"
        );
        redacts_pypi_token: "pypi_token" => (
            "password = ", format!("{}{}", concat!("pypi-AgEI", "cHlwaS5vcmc"), rnd(43, 70, URLSAFE)), "\n"
        );
        redacts_docker_hub_pat: "docker_hub_pat" => (
            "docker login -p ", format!("{}{}", concat!("dckr", "_pat_"), rnd(44, 27, URLSAFE)), " user"
        );
        redacts_postman_api_key: "postman_api_key" => (
            "pm ", format!("{}{}-{}", concat!("PM", "AK-"), rnd(45, 24, HEX), rnd(46, 34, HEX)), " end"
        );
        redacts_linear_api_key: "linear_api_key" => (
            "linear ", format!("{}{}", concat!("lin", "_api_"), rnd(47, 40, ALNUM)), " end"
        );
        redacts_notion_token: "notion_token" => (
            "notion ", format!("{}{}{}", concat!("nt", "n_"), rnd(48, 11, DIGITS), rnd(49, 35, ALNUM)), " end"
        );
    }
}
