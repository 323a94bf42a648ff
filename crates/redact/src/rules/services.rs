//! Other services with a distinctive token prefix (compared with gitleaks'
//! rule list; the patterns are our own).

use super::{Check, Reach, Spec};

pub(crate) const SPECS: &[Spec] = &[
    Spec {
        kind: "onepassword_token",
        pattern: r"(?-u:\b)(?:ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})",
        keywords: &["ops_eyJ", "A3-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "dynatrace_token",
        pattern: r"(?-u:\b)dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",
        keywords: &["dt0c01."],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "rubygems_token",
        pattern: r"(?-u:\b)rubygems_[a-f0-9]{48}(?-u:\b)",
        keywords: &["rubygems_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "prefect_token",
        pattern: r"(?-u:\b)pnu_[A-Za-z0-9]{36}(?-u:\b)",
        keywords: &["pnu_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "readme_token",
        pattern: r"(?-u:\b)rdme_[a-z0-9]{70}(?-u:\b)",
        keywords: &["rdme_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "sourcegraph_token",
        pattern: r"(?-u:\b)sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}(?-u:\b)",
        keywords: &["sgp_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "shippo_token",
        pattern: r"(?-u:\b)shippo_(?:live|test)_[a-fA-F0-9]{40}(?-u:\b)",
        keywords: &["shippo_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "clojars_token",
        pattern: r"(?i-u)(?-u:\b)CLOJARS_[a-z0-9]{60}(?-u:\b)",
        keywords: &["clojars_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "duffel_token",
        pattern: r"(?-u:\b)duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}",
        keywords: &["duffel_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "easypost_token",
        pattern: r"(?-u:\b)EZ[AT]K[A-Za-z0-9]{54}(?-u:\b)",
        keywords: &["EZAK", "EZTK"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "flutterwave_secret_key",
        pattern: r"(?-u:\b)FLWSECK(?:_TEST)?-[a-hA-H0-9]{32}-X",
        keywords: &["FLWSECK"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "frameio_token",
        pattern: r"(?-u:\b)fio-u-[A-Za-z0-9_=\-]{64}",
        keywords: &["fio-u-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "openshift_token",
        pattern: r"(?-u:\b)(sha256~[A-Za-z0-9_\-]{43})(?:[^A-Za-z0-9_\-]|\z)",
        keywords: &["sha256~"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
    Spec {
        kind: "octopus_deploy_api_key",
        pattern: r"(?-u:\b)API-[A-Z0-9]{26}(?-u:\b)",
        keywords: &["API-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "scalingo_token",
        pattern: r"(?-u:\b)tk-us-[A-Za-z0-9_\-]{48}",
        keywords: &["tk-us-"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "settlemint_token",
        pattern: r"(?-u:\b)sm_[aps]at_[A-Za-z0-9]{16}(?-u:\b)",
        keywords: &["sm_aat_", "sm_pat_", "sm_sat_"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "artifactory_token",
        pattern: r"(?-u:\b)(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})(?-u:\b)",
        keywords: &["AKCp", "cmVmd"],
        check: Check::Group(0),
        reach: Reach::Line,
    },
    Spec {
        kind: "teams_webhook",
        pattern: r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/([a-z0-9]{8}-(?:[a-z0-9]{4}-){3}[a-z0-9]{12}@[a-z0-9]{8}-(?:[a-z0-9]{4}-){3}[a-z0-9]{12}/IncomingWebhook/[a-z0-9]{32}/[a-z0-9]{8}-(?:[a-z0-9]{4}-){3}[a-z0-9]{12})",
        keywords: &["webhook.office.com"],
        check: Check::Group(1),
        reach: Reach::Line,
    },
];

#[cfg(test)]
pub(crate) mod tests {
    use crate::testkit::*;

    format_tests! {
        redacts_onepassword_token: "onepassword_token" => (
            "token: ", format!("{}{}", concat!("op", "s_eyJ"), rnd(301, 260, B64)), "\n"
        );
        redacts_dynatrace_token: "dynatrace_token" => (
            "token: ", format!("{}{}.{}", concat!("dt0c", "01."), rnd(302, 24, ALNUM), rnd(352, 64, ALNUM)), "\n"
        );
        redacts_rubygems_token: "rubygems_token" => (
            "token: ", format!("{}{}", concat!("ruby", "gems_"), rnd(303, 48, HEX)), "\n"
        );
        redacts_prefect_token: "prefect_token" => (
            "token: ", format!("{}{}", concat!("pn", "u_"), rnd(304, 36, ALNUM)), "\n"
        );
        redacts_readme_token: "readme_token" => (
            "token: ", format!("{}{}", concat!("rd", "me_"), rnd(305, 70, "abcdefghijklmnopqrstuvwxyz0123456789")), "\n"
        );
        redacts_sourcegraph_token: "sourcegraph_token" => (
            "token: ", format!("{}{}", concat!("sg", "p_"), rnd(306, 40, HEX)), "\n"
        );
        redacts_shippo_token: "shippo_token" => (
            "token: ", format!("{}{}", concat!("shippo_", "live_"), rnd(307, 40, HEX)), "\n"
        );
        redacts_clojars_token: "clojars_token" => (
            "token: ", format!("{}{}", concat!("CLO", "JARS_"), rnd(308, 60, "abcdefghijklmnopqrstuvwxyz0123456789")), "\n"
        );
        redacts_duffel_token: "duffel_token" => (
            "token: ", format!("{}{}", concat!("duffel_", "live_"), rnd(309, 43, ALNUM)), "\n"
        );
        redacts_easypost_token: "easypost_token" => (
            "token: ", format!("{}{}", concat!("EZ", "AK"), rnd(310, 54, ALNUM)), "\n"
        );
        redacts_flutterwave_secret_key: "flutterwave_secret_key" => (
            "token: ", format!("{}{}-X", concat!("FLWSE", "CK_TEST-"), rnd(311, 32, "abcdefABCDEF0123456789")), "\n"
        );
        redacts_frameio_token: "frameio_token" => (
            "token: ", format!("{}{}", concat!("fio", "-u-"), rnd(312, 64, ALNUM)), "\n"
        );
        redacts_openshift_token: "openshift_token" => (
            "token: ", format!("{}{}", concat!("sha2", "56~"), rnd(313, 43, URLSAFE)), "\n"
        );
        redacts_octopus_deploy_api_key: "octopus_deploy_api_key" => (
            "token: ", format!("{}{}", concat!("AP", "I-"), rnd(314, 26, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")), "\n"
        );
        redacts_scalingo_token: "scalingo_token" => (
            "token: ", format!("{}{}", concat!("tk", "-us-"), rnd(315, 48, ALNUM)), "\n"
        );
        redacts_settlemint_token: "settlemint_token" => (
            "token: ", format!("{}{}", concat!("sm_", "pat_"), rnd(316, 16, ALNUM)), "\n"
        );
        redacts_artifactory_token: "artifactory_token" => (
            "token: ", format!("{}{}", concat!("AK", "Cp"), rnd(317, 69, ALNUM)), "\n"
        );
        redacts_teams_webhook: "teams_webhook" => (
            "url = https://contoso.webhook.office.com/webhookb2/", format!("{}-{}-{}-{}-{}@{}-{}-{}-{}-{}/IncomingWebhook/{}/{}-{}-{}-{}-{}", rnd(318, 8, "abcdef0123456789"), rnd(319, 4, "abcdef0123456789"), rnd(320, 4, "abcdef0123456789"), rnd(321, 4, "abcdef0123456789"), rnd(322, 12, "abcdef0123456789"), rnd(323, 8, "abcdef0123456789"), rnd(324, 4, "abcdef0123456789"), rnd(325, 4, "abcdef0123456789"), rnd(326, 4, "abcdef0123456789"), rnd(327, 12, "abcdef0123456789"), rnd(328, 32, "abcdef0123456789"), rnd(329, 8, "abcdef0123456789"), rnd(330, 4, "abcdef0123456789"), rnd(331, 4, "abcdef0123456789"), rnd(332, 4, "abcdef0123456789"), rnd(333, 12, "abcdef0123456789")), "\n"
        );
    }
}
